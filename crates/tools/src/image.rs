//! Loading a local image for the model (`view_image`).
//!
//! The format is recognised from the file's bytes, never its name: PNG, JPEG, GIF and WebP are
//! accepted. An image that fits within `max_dimension` on both sides and is already PNG or JPEG
//! is passed through byte for byte. Otherwise it is decoded (the first frame of an animation),
//! scaled down to fit if needed (keeping its aspect ratio), and re-encoded: JPEG sources as
//! JPEG (quality 85), everything else as PNG, which keeps transparency. The result is a
//! `data:` URL ready for an `input_image` content part.

use std::io::Cursor;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ImageFormat};

use crate::error::FileToolError;
use crate::file_access::{FileAccess, FileMeta, LocalFiles};
use crate::paths;
use crate::read_file::read_whole;
use crate::spec::names::VIEW_IMAGE;

/// JPEG quality used when a JPEG has to be re-encoded.
const JPEG_QUALITY: u8 = 85;

/// An image ready to send to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedImage {
    /// `data:image/png;base64,…` or `data:image/jpeg;base64,…`.
    pub data_url: String,
    /// Width in pixels of the image as sent.
    pub width: u32,
    /// Height in pixels of the image as sent.
    pub height: u32,
    /// Whether it was scaled down to fit `max_dimension`.
    pub resized: bool,
}

/// Read the image at `path` and prepare it for the model, scaling it down so that neither side
/// exceeds `max_dimension` pixels (a `max_dimension` of 0 is treated as 1).
pub fn load_image_for_model(path: &Path, max_dimension: u32) -> Result<LoadedImage, FileToolError> {
    check_kind(&LocalFiles, path)?;
    let bytes =
        std::fs::read(path).map_err(|err| FileToolError::from_io("read", path.into(), err))?;
    prepare(path, &bytes, max_dimension)
}

/// [`load_image_for_model`] through `fs`, for images on another machine; an image file
/// larger than [`MAX_FILE_READ_BYTES`](crate::MAX_FILE_READ_BYTES) is refused.
pub fn load_image_for_model_in(
    fs: &dyn FileAccess,
    path: &Path,
    max_dimension: u32,
) -> Result<LoadedImage, FileToolError> {
    let metadata = check_kind(fs, path)?;
    let bytes = read_whole(fs, VIEW_IMAGE, path, metadata.len)?;
    prepare(path, &bytes, max_dimension)
}

/// The path must exist and be a regular file.
fn check_kind(fs: &dyn FileAccess, path: &Path) -> Result<FileMeta, FileToolError> {
    let metadata = paths::stat(fs, path, "read")?;
    if metadata.is_dir {
        return Err(not_an_image(path, "it is a directory"));
    }
    if !metadata.is_file {
        return Err(FileToolError::NotARegularFile {
            path: path.to_path_buf(),
        });
    }
    Ok(metadata)
}

/// Turn the file's bytes into what the model is sent.
fn prepare(path: &Path, bytes: &[u8], max_dimension: u32) -> Result<LoadedImage, FileToolError> {
    let max_dimension = max_dimension.max(1);
    let format = image::guess_format(bytes)
        .map_err(|_| not_an_image(path, "its contents are not in a known image format"))?;
    if !matches!(
        format,
        ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP
    ) {
        let name = format
            .extensions_str()
            .first()
            .copied()
            .unwrap_or("unknown");
        return Err(not_an_image(path, &format!("it is a {name} image")));
    }
    let decoded = image::load_from_memory_with_format(bytes, format)
        .map_err(|err| not_an_image(path, &format!("it could not be decoded: {err}")))?;

    let (width, height) = (decoded.width(), decoded.height());
    let fits = width <= max_dimension && height <= max_dimension;
    if fits && matches!(format, ImageFormat::Png | ImageFormat::Jpeg) {
        return Ok(LoadedImage {
            data_url: data_url(mime(format), bytes),
            width,
            height,
            resized: false,
        });
    }

    let image = if fits {
        decoded
    } else {
        decoded.resize(max_dimension, max_dimension, FilterType::Triangle)
    };
    let (mime_type, encoded) =
        encode(&image, format).map_err(|err| FileToolError::ImageEncode {
            path: path.to_path_buf(),
            detail: err.to_string(),
        })?;
    Ok(LoadedImage {
        data_url: data_url(mime_type, &encoded),
        width: image.width(),
        height: image.height(),
        resized: !fits,
    })
}

fn encode(
    image: &DynamicImage,
    source: ImageFormat,
) -> image::ImageResult<(&'static str, Vec<u8>)> {
    let mut out = Vec::new();
    if source == ImageFormat::Jpeg {
        let rgb = DynamicImage::ImageRgb8(image.to_rgb8());
        rgb.write_with_encoder(JpegEncoder::new_with_quality(&mut out, JPEG_QUALITY))?;
        Ok(("image/jpeg", out))
    } else {
        image.write_to(&mut Cursor::new(&mut out), ImageFormat::Png)?;
        Ok(("image/png", out))
    }
}

fn mime(format: ImageFormat) -> &'static str {
    match format {
        ImageFormat::Jpeg => "image/jpeg",
        _ => "image/png",
    }
}

fn data_url(mime_type: &str, bytes: &[u8]) -> String {
    format!("data:{mime_type};base64,{}", BASE64.encode(bytes))
}

fn not_an_image(path: &Path, detail: &str) -> FileToolError {
    FileToolError::NotAnImage {
        path: path.to_path_buf(),
        detail: detail.to_string(),
    }
}
