mod cli;
mod common;
mod corpus;
mod differential;
mod properties;
