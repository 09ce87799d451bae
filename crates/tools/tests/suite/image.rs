//! load_image_for_model: formats by content, pass-through, resizing, errors.

use std::io::Cursor;
use std::path::Path;

use base64::Engine as _;
use osprey_tools::{FileToolError, load_image_for_model};
use pretty_assertions::assert_eq;
use tempfile::TempDir;

fn encode(width: u32, height: u32, format: image::ImageFormat) -> Vec<u8> {
    let img = image::RgbaImage::from_fn(width, height, |x, y| {
        image::Rgba([(x % 256) as u8, (y % 256) as u8, 128, 255])
    });
    let img = if format == image::ImageFormat::Jpeg {
        image::DynamicImage::ImageRgb8(image::DynamicImage::ImageRgba8(img).to_rgb8())
    } else {
        image::DynamicImage::ImageRgba8(img)
    };
    let mut out = Vec::new();
    img.write_to(&mut Cursor::new(&mut out), format).unwrap();
    out
}

fn decode_data_url(url: &str) -> (String, image::DynamicImage) {
    let (head, data) = url.split_once(";base64,").unwrap();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    (
        head.trim_start_matches("data:").to_string(),
        image::load_from_memory(&bytes).unwrap(),
    )
}

#[test]
fn small_png_passes_through_byte_for_byte() {
    let dir = TempDir::new().unwrap();
    let bytes = encode(40, 20, image::ImageFormat::Png);
    // A misleading extension: the format comes from the content.
    let path = dir.path().join("picture.jpg");
    std::fs::write(&path, &bytes).unwrap();
    let loaded = load_image_for_model(&path, 2048).unwrap();
    assert_eq!(
        (loaded.width, loaded.height, loaded.resized),
        (40, 20, false)
    );
    let expected = format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&bytes)
    );
    assert_eq!(loaded.data_url, expected);
}

#[test]
fn large_jpeg_is_resized_keeping_its_aspect_ratio() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("photo.jpeg");
    std::fs::write(&path, encode(400, 100, image::ImageFormat::Jpeg)).unwrap();
    let loaded = load_image_for_model(&path, 200).unwrap();
    assert_eq!(
        (loaded.width, loaded.height, loaded.resized),
        (200, 50, true)
    );
    let (mime, decoded) = decode_data_url(&loaded.data_url);
    assert_eq!(mime, "image/jpeg");
    assert_eq!((decoded.width(), decoded.height()), (200, 50));
}

#[test]
fn gif_and_webp_are_reencoded_as_png() {
    let dir = TempDir::new().unwrap();
    for (name, format) in [
        ("anim.gif", image::ImageFormat::Gif),
        ("pic.webp", image::ImageFormat::WebP),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, encode(30, 60, format)).unwrap();
        let loaded = load_image_for_model(&path, 30).unwrap();
        assert_eq!(
            (loaded.width, loaded.height, loaded.resized),
            (15, 30, true),
            "{name}"
        );
        let (mime, decoded) = decode_data_url(&loaded.data_url);
        assert_eq!(mime, "image/png", "{name}");
        assert_eq!((decoded.width(), decoded.height()), (15, 30), "{name}");
    }
}

#[test]
fn non_images_missing_files_and_directories_are_refused() {
    let dir = TempDir::new().unwrap();
    let text = dir.path().join("notes.png");
    std::fs::write(&text, "just text").unwrap();
    let err = load_image_for_model(&text, 100).unwrap_err();
    assert!(matches!(err, FileToolError::NotAnImage { .. }));
    assert_eq!(
        err.to_string(),
        format!(
            "{} is not an image view_image can read (its contents are not in a known image \
             format); it reads PNG, JPEG, GIF and WebP files",
            text.display()
        )
    );

    let truncated = dir.path().join("broken.png");
    let mut bytes = encode(50, 50, image::ImageFormat::Png);
    bytes.truncate(40);
    std::fs::write(&truncated, bytes).unwrap();
    assert!(
        load_image_for_model(&truncated, 100)
            .unwrap_err()
            .to_string()
            .contains("it could not be decoded")
    );

    let missing = dir.path().join("gone.png");
    assert!(matches!(
        load_image_for_model(&missing, 100),
        Err(FileToolError::NotFound { .. })
    ));
    assert!(
        load_image_for_model(dir.path(), 100)
            .unwrap_err()
            .to_string()
            .contains("(it is a directory)")
    );
    assert!(load_image_for_model(Path::new("/definitely/not/here.png"), 1).is_err());
}
