//! Ctrl+V: reads the system clipboard (X11, or a Wayland compositor with the data-control
//! protocol) with `arboard`. An image is encoded as PNG into [`ImageDir`], a private folder
//! that lives as long as the UI and is removed when it exits, and attached like a pasted
//! path; text is pasted.
//!
//! The read runs on a thread of its own and is waited for at most [`WAIT`]: a clipboard
//! owner that never answers (or an X server that does not) leaves a thread behind, never a
//! hung UI or a hung exit (a blocking task would keep the runtime from shutting down).

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use thiserror::Error;

/// The longest a Ctrl+V waits for the clipboard.
pub const WAIT: Duration = Duration::from_secs(2);

/// What the clipboard held.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// An image, encoded as PNG.
    Png(Vec<u8>),
    Text(String),
}

/// Why nothing could be pasted; the message says what to do instead.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ClipboardError {
    #[error(
        "Ctrl+V: no clipboard here (neither DISPLAY nor WAYLAND_DISPLAY is set, as over SSH); \
         paste or drag the image file's path instead"
    )]
    NoDisplay,
    #[error(
        "Ctrl+V: could not reach the clipboard on {display} ({detail}); paste or drag the \
         image file's path instead"
    )]
    Unreachable { display: String, detail: String },
    #[error(
        "Ctrl+V: the clipboard holds no image or text; copy an image, or paste or drag the \
         image file's path instead"
    )]
    Empty,
    #[error(
        "Ctrl+V: the clipboard did not answer within {}s; try again, or paste or drag the \
         image file's path instead", .0.as_secs()
    )]
    TimedOut(Duration),
    #[error(
        "Ctrl+V: could not read the clipboard's image ({0}); paste or drag the image file's \
         path instead"
    )]
    Image(String),
}

/// Which display the clipboard is reached through, as arboard chooses it.
fn display() -> Option<String> {
    let var = |name: &str| {
        std::env::var(name)
            .ok()
            .filter(|v| !v.is_empty())
            .map(|v| format!("{name}={v}"))
    };
    var("WAYLAND_DISPLAY").or_else(|| var("DISPLAY"))
}

/// Reads the clipboard: its image if it holds one, else its text.
pub async fn read(wait: Duration) -> Result<Content, ClipboardError> {
    let Some(display) = display() else {
        return Err(ClipboardError::NoDisplay);
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("clipboard".to_owned())
        .spawn(move || {
            let _ = tx.send(read_blocking(&display));
        });
    if let Err(e) = spawned {
        return Err(ClipboardError::Image(format!("no thread to read it: {e}")));
    }
    match tokio::time::timeout(wait, rx).await {
        Ok(Ok(result)) => result,
        Ok(Err(_)) => Err(ClipboardError::Image("the reader stopped".to_owned())),
        Err(_) => Err(ClipboardError::TimedOut(wait)),
    }
}

fn read_blocking(display: &str) -> Result<Content, ClipboardError> {
    let mut clipboard = arboard::Clipboard::new().map_err(|e| ClipboardError::Unreachable {
        display: display.to_owned(),
        detail: e.to_string(),
    })?;
    let image_error = match clipboard.get_image() {
        Ok(image) => {
            return png(image.width, image.height, &image.bytes)
                .map(Content::Png)
                .map_err(ClipboardError::Image);
        }
        Err(arboard::Error::ContentNotAvailable) => None,
        Err(e) => Some(e.to_string()),
    };
    match clipboard.get_text() {
        Ok(text) if !text.is_empty() => Ok(Content::Text(text)),
        _ => Err(image_error.map_or(ClipboardError::Empty, ClipboardError::Image)),
    }
}

/// RGBA pixels as a PNG file's bytes.
pub fn png(width: usize, height: usize, rgba: &[u8]) -> Result<Vec<u8>, String> {
    use image::ImageEncoder;
    let size = |n: usize| u32::try_from(n).ok().filter(|n| *n > 0);
    let (Some(w), Some(h)) = (size(width), size(height)) else {
        return Err(format!("an image of {width}x{height} pixels"));
    };
    if width.checked_mul(height).and_then(|n| n.checked_mul(4)) != Some(rgba.len()) {
        return Err(format!("{} bytes for {width}x{height} pixels", rgba.len()));
    }
    let mut out = Vec::new();
    image::codecs::png::PngEncoder::new(&mut out)
        .write_image(rgba, w, h, image::ExtendedColorType::Rgba8)
        .map_err(|e| e.to_string())?;
    Ok(out)
}

/// The folder clipboard images are saved in: made at the first one, removed by
/// [`ImageDir::close`] when the UI exits (or when dropped).
#[derive(Debug, Default)]
pub struct ImageDir {
    state: Mutex<DirState>,
}

#[derive(Debug, Default)]
enum DirState {
    #[default]
    NotMade,
    Open {
        dir: tempfile::TempDir,
        saved: usize,
    },
    Closed,
}

impl ImageDir {
    /// Writes `png` as the next `clipboard-N.png` and returns its path.
    pub fn save(&self, png: &[u8]) -> Result<PathBuf, String> {
        let mut state = self
            .state
            .lock()
            .map_err(|_| "the image folder's lock is poisoned".to_owned())?;
        if matches!(*state, DirState::NotMade) {
            let dir = tempfile::Builder::new()
                .prefix("osprey-clipboard-")
                .tempdir()
                .map_err(|e| {
                    format!(
                        "could not make a folder for it in {}: {e}",
                        std::env::temp_dir().display()
                    )
                })?;
            *state = DirState::Open { dir, saved: 0 };
        }
        let DirState::Open { dir, saved } = &mut *state else {
            return Err("the UI is closing".to_owned());
        };
        *saved += 1;
        let path = dir.path().join(format!("clipboard-{saved}.png"));
        std::fs::write(&path, png)
            .map_err(|e| format!("could not write {}: {e}", path.display()))?;
        Ok(path)
    }

    /// Removes the folder and what is in it; later saves fail.
    pub fn close(&self) {
        if let Ok(mut state) = self.state.lock() {
            *state = DirState::Closed;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn pixels_become_a_png_of_the_same_size_and_pixels() {
        let rgba = [255, 0, 0, 255, 0, 255, 0, 128];
        let bytes = png(2, 1, &rgba).unwrap();
        let decoded = image::load_from_memory(&bytes).unwrap().to_rgba8();
        assert_eq!(decoded.dimensions(), (2, 1));
        assert_eq!(decoded.into_raw(), rgba.to_vec());
        assert!(
            png(2, 2, &rgba).is_err(),
            "too few bytes is an error, not a panic"
        );
        assert!(png(0, 0, &[]).is_err());
    }

    #[test]
    fn saved_images_live_until_the_folder_is_closed() {
        let dir = ImageDir::default();
        let first = dir.save(b"one").unwrap();
        let second = dir.save(b"two").unwrap();
        assert!(first.ends_with("clipboard-1.png"), "{}", first.display());
        assert!(second.ends_with("clipboard-2.png"), "{}", second.display());
        assert_eq!(std::fs::read(&second).unwrap(), b"two");
        let folder = first.parent().unwrap().to_path_buf();
        dir.close();
        assert!(!folder.exists(), "the folder is removed on exit");
        assert!(dir.save(b"late").is_err(), "nothing is saved after closing");
    }
}
