mod in_process;
mod python_client;
mod support;
