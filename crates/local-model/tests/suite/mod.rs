mod common;
mod e2e;
mod grammar_property;
mod model;
mod serve;
