mod common;
mod escape;
mod fallback;
mod legit;
mod network;
mod split;
