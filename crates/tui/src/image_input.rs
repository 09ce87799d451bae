//! The images of a message as the app server receives them: by path when the server runs in
//! this process (it reads the file itself), inline as `data:` URLs when it runs elsewhere
//! (`--remote`), where a path on this machine means nothing.
//!
//! Inline images are prepared as the server prepares a path it reads (scaled to fit, PNG or
//! JPEG) and wrapped in the same `<image name=[Image #N]>` label, so the model sees the same
//! thing either way, minus a path that would not exist on the server's machine.

use std::path::Path;

use osprey_app_server_protocol::UserInput;
use osprey_config::ToolsConfig;

/// The inputs for `paths` (image N is `paths[N - 1]`), to go before the message's text.
pub fn image_inputs(paths: Vec<String>, inline: bool) -> Vec<UserInput> {
    if !inline {
        return paths
            .into_iter()
            .map(|path| UserInput::LocalImage { path, detail: None })
            .collect();
    }
    paths
        .iter()
        .enumerate()
        .flat_map(|(index, path)| inline_image(index + 1, path))
        .collect()
}

fn text(text: String) -> UserInput {
    UserInput::Text {
        text,
        text_elements: Some(Vec::new()),
    }
}

fn inline_image(number: usize, path: &str) -> Vec<UserInput> {
    let max = ToolsConfig::DEFAULT_VIEW_IMAGE_MAX_DIMENSION;
    match osprey_tools::load_image_for_model(Path::new(path), max) {
        Ok(image) => vec![
            text(format!("<image name=[Image #{number}]>")),
            UserInput::Image {
                url: Some(image.data_url),
                file_id: None,
                detail: None,
            },
            text("</image>".to_owned()),
        ],
        // As the server does for a path it cannot read: the model is told, the turn goes on.
        Err(e) => vec![text(format!(
            "[Image #{number}, {path}, could not be attached: {e}]"
        ))],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG_1X1: &[u8] = &[
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f,
        0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8,
        0xcf, 0xc0, 0xf0, 0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00,
        0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ];

    #[test]
    fn a_local_server_gets_paths() {
        let inputs = image_inputs(vec!["/a.png".into(), "/b.png".into()], false);
        assert_eq!(
            inputs,
            vec![
                UserInput::LocalImage {
                    path: "/a.png".into(),
                    detail: None
                },
                UserInput::LocalImage {
                    path: "/b.png".into(),
                    detail: None
                },
            ]
        );
    }

    #[test]
    fn a_remote_server_gets_labelled_data_urls_and_a_note_for_an_unreadable_file() {
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("dot.png");
        std::fs::write(&png, PNG_1X1).unwrap();
        let missing = dir.path().join("gone.png");
        let inputs = image_inputs(
            vec![png.display().to_string(), missing.display().to_string()],
            true,
        );
        assert_eq!(inputs.len(), 4, "{inputs:?}");
        assert_eq!(inputs[0], text("<image name=[Image #1]>".into()));
        let UserInput::Image { url: Some(url), .. } = &inputs[1] else {
            panic!("an inline image: {:?}", inputs[1]);
        };
        assert!(url.starts_with("data:image/png;base64,"), "{url}");
        assert_eq!(inputs[2], text("</image>".into()));
        let UserInput::Text { text: note, .. } = &inputs[3] else {
            panic!("a note: {:?}", inputs[3]);
        };
        assert!(
            note.starts_with("[Image #2, ") && note.contains("could not be attached"),
            "{note}"
        );
    }
}
