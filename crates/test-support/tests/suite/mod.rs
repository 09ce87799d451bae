mod binary;
mod capture;
mod checks;
mod framing;
mod routing;
mod support;
mod transport;
