mod args;
mod grep_files;
mod image;
mod list_dir;
mod read_file;
mod specs;
mod truncation;
