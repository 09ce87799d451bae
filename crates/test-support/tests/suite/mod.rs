mod binary;
mod capture;
mod checks;
mod framing;
mod support;
mod transport;
