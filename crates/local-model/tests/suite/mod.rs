mod common;
mod e2e;
mod grammar_property;
mod limits;
mod model;
mod serve;
