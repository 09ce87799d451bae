mod common;
mod escape;
mod legit;
mod network;
mod split;
