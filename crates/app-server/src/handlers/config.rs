//! `model/list` and `config/read`: what the user's real configuration says (files, profile
//! and environment, as a thread started now would get it).

use osprey_app_server_protocol as wire;
use osprey_config::{Config, LOCAL_PROVIDER_ID};
use serde_json::{Map, Value, json};

use super::thread_config;
use super::{Reply, answer};
use crate::server::Server;

fn efforts() -> Vec<wire::ReasoningEffortOption> {
    [
        ("low", "Fast answers, light reasoning"),
        ("medium", "Balanced speed and depth"),
        ("high", "Deeper reasoning for hard problems"),
    ]
    .into_iter()
    .map(|(effort, description)| wire::ReasoningEffortOption {
        reasoning_effort: effort.to_owned(),
        description: description.to_owned(),
    })
    .collect()
}

fn model_entry(id: &str, provider: &str, description: String, is_default: bool) -> wire::Model {
    wire::Model {
        id: id.to_owned(),
        model: id.to_owned(),
        display_name: id.to_owned(),
        description,
        supported_reasoning_efforts: if provider == LOCAL_PROVIDER_ID {
            Vec::new()
        } else {
            efforts()
        },
        default_reasoning_effort: (provider != LOCAL_PROVIDER_ID).then(|| "medium".to_owned()),
        is_default,
        hidden: false,
        model_provider: Some(provider.to_owned()),
    }
}

/// The configured model (the default), the embedded local model, and every profile's model.
fn models(config: &Config, profiles: &[(String, String, String)]) -> Vec<wire::Model> {
    let mut models = vec![model_entry(
        &config.model,
        &config.model_provider_id,
        format!(
            "The configured model, from provider `{}`",
            config.model_provider_id
        ),
        true,
    )];
    if config.model_provider_id != LOCAL_PROVIDER_ID {
        models.push(model_entry(
            osprey_config::LOCAL_MODEL_NAME,
            LOCAL_PROVIDER_ID,
            "The embedded offline model (runs in process; fetch it with `osprey model fetch`)"
                .to_owned(),
            false,
        ));
    }
    for (profile, model, provider) in profiles {
        if models
            .iter()
            .any(|m| &m.id == model && m.model_provider.as_deref() == Some(provider))
        {
            continue;
        }
        models.push(model_entry(
            model,
            provider,
            format!("From profile `{profile}`"),
            false,
        ));
    }
    models
}

/// (profile, model, provider) for each `[profiles.*]` that names a model.
fn profile_models(config: &Config) -> Vec<(String, String, String)> {
    let path = config.osprey_home.join("config.toml");
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let Ok(table) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let Some(profiles) = table.get("profiles").and_then(toml::Value::as_table) else {
        return Vec::new();
    };
    profiles
        .iter()
        .filter_map(|(name, profile)| {
            let model = profile.get("model")?.as_str()?.to_owned();
            let provider = profile
                .get("model_provider")
                .and_then(toml::Value::as_str)
                .unwrap_or(&config.model_provider_id)
                .to_owned();
            Some((name.clone(), model, provider))
        })
        .collect()
}

pub(crate) fn model_list(server: &Server, params: wire::ModelListParams) -> Reply {
    let built = thread_config::build(server, &Default::default(), None)?;
    let all = models(&built.config, &profile_models(&built.config));
    let start = match &params.cursor {
        Some(cursor) => cursor.parse::<usize>().map_err(|_| {
            format!("invalid cursor `{cursor}`: pass the `nextCursor` of an earlier model/list")
        })?,
        None => 0,
    };
    let limit = params.limit.map_or(usize::MAX, |l| l.max(1) as usize);
    let page: Vec<wire::Model> = all.iter().skip(start).take(limit).cloned().collect();
    let end = start + page.len();
    answer(&wire::ModelListResponse {
        data: page,
        next_cursor: (end < all.len()).then(|| end.to_string()),
    })
}

pub(crate) fn config_read(server: &Server, params: wire::ConfigReadParams) -> Reply {
    let overrides = wire::ThreadOverrides {
        cwd: params.cwd,
        ..Default::default()
    };
    let config = thread_config::build(server, &overrides, None)?.config;
    let providers: Map<String, Value> = config
        .model_providers
        .iter()
        .map(|(id, p)| {
            (
                id.clone(),
                json!({
                    "name": p.name,
                    "base_url": p.base_url,
                    "env_key": p.env_key,
                    "in_process": osprey_config::IN_PROCESS_PROVIDER_IDS.contains(&id.as_str()),
                }),
            )
        })
        .collect();
    let mut values = Map::new();
    values.insert("model".into(), json!(config.model));
    values.insert("model_provider".into(), json!(config.model_provider_id));
    values.insert(
        "model_reasoning_effort".into(),
        json!(config.model_reasoning_effort.map(|e| e.as_str())),
    );
    values.insert(
        "model_context_window".into(),
        json!(config.context_window()),
    );
    values.insert(
        "approval_policy".into(),
        json!(config.approval_policy().as_str()),
    );
    values.insert(
        "sandbox_mode".into(),
        json!(config.sandbox_policy().mode().as_str()),
    );
    values.insert("cwd".into(), json!(config.cwd.display().to_string()));
    values.insert("profile".into(), json!(config.profile));
    values.insert("model_providers".into(), Value::Object(providers));
    values.insert(
        "mcp_servers".into(),
        json!(config.mcp_servers.keys().collect::<Vec<_>>()),
    );
    values.insert(
        "local_model".into(),
        json!({
            "model": osprey_config::LOCAL_MODEL_NAME,
            "context_tokens": config.local_model.context_tokens,
        }),
    );
    answer(&wire::ConfigReadResponse {
        config: values,
        origins: Map::new(),
        layers: None,
    })
}
