mod cli_overrides;
mod docs;
mod errors;
mod fixture;
mod layers;
mod providers;
mod requirements;
mod resolved;
