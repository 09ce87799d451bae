mod python_client;
mod support;
