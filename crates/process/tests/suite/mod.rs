mod expiration;
mod interactive;
mod run;
mod spawn_errors;
mod support;
