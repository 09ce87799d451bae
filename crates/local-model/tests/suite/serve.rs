//! The OpenAI-compatible server over real HTTP, with the real model.

use serde_json::{Value, json};

use super::common::adapter_with_cache;

async fn start() -> Option<(String, tempfile::TempDir)> {
    let dir = tempfile::tempdir().unwrap();
    let adapter = adapter_with_cache(dir.path())?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, osprey_local_model::serve::router(adapter))
            .await
            .unwrap();
    });
    Some((format!("http://{addr}/v1"), dir))
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_completions_returns_a_constrained_tool_call_and_responses_stream() {
    let Some((base, _dir)) = start().await else {
        return;
    };
    let client = reqwest::Client::new();
    let body = json!({
        "model": "local",
        "messages": [{"role": "user", "content": "Create the file notes.txt containing the word hi."}],
        "tools": [{"type": "function", "function": osprey_local_model::write_file_spec()}],
    });
    let response: Value = client
        .post(format!("{base}/chat/completions"))
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let choice = &response["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls", "{response}");
    let call = &choice["message"]["tool_calls"][0]["function"];
    assert_eq!(call["name"], "write_file");
    let args: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
    assert!(
        args["path"].as_str().unwrap().ends_with("notes.txt"),
        "{args}"
    );
    assert!(response["usage"]["prompt_tokens"].as_u64().unwrap() > 0);

    let sse = client
        .post(format!("{base}/responses"))
        .json(
            &json!({"model": "local", "input": "Say hello in one short sentence.", "stream": true}),
        )
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let kinds: Vec<&str> = sse
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(kinds.first(), Some(&"response.created"), "{sse}");
    assert!(kinds.contains(&"response.output_text.delta"), "{sse}");
    assert_eq!(kinds.last(), Some(&"response.completed"), "{sse}");
}
