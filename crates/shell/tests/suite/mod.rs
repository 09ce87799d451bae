mod corpus;
mod robustness;
