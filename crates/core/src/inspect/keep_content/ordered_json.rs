//! A JSON value that keeps its objects' keys in file order, so the write offered for a JSON
//! file changes only the keys the model set (serde_json's own map sorts them unless a
//! crate-wide feature is on, which would change every JSON Osprey writes).

use std::collections::BTreeSet;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Json {
    Object(Vec<(String, Json)>),
    Array(Vec<Json>),
    /// null, a boolean, a number or a string.
    Scalar(serde_json::Value),
}

impl Json {
    /// `text` as JSON when it is one object.
    pub(super) fn parse_object(text: &str) -> Option<Json> {
        match serde_json::from_str::<Json>(text) {
            Ok(object @ Json::Object(_)) => Some(object),
            _ => None,
        }
    }

    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Keys of this object (dotted paths for nested objects both sides have) that `other`
    /// does not have.
    pub(super) fn keys_missing_from(&self, other: &Json) -> BTreeSet<String> {
        let mut missing = BTreeSet::new();
        self.collect_missing(other, "", &mut missing);
        missing
    }

    fn collect_missing(&self, other: &Json, prefix: &str, missing: &mut BTreeSet<String>) {
        let Json::Object(members) = self else {
            return;
        };
        for (key, value) in members {
            let path = format!("{prefix}{key}");
            match other.get(key) {
                None => {
                    missing.insert(path);
                }
                Some(theirs @ Json::Object(_)) => {
                    value.collect_missing(theirs, &format!("{path}."), missing)
                }
                Some(_) => {}
            }
        }
    }

    /// Sets each key of `other` here: nested objects key by key, anything else replaced;
    /// new keys go last, in `other`'s order.
    pub(super) fn merge(&mut self, other: &Json) {
        let (Json::Object(members), Json::Object(theirs)) = (&mut *self, other) else {
            *self = other.clone();
            return;
        };
        for (key, value) in theirs {
            match members.iter_mut().find(|(k, _)| k == key) {
                Some((_, mine))
                    if matches!((&*mine, value), (Json::Object(_), Json::Object(_))) =>
                {
                    mine.merge(value)
                }
                Some((_, mine)) => *mine = value.clone(),
                None => members.push((key.clone(), value.clone())),
            }
        }
    }

    /// Pretty-printed, one member per line, nested levels indented by `indent`.
    pub(super) fn render(&self, indent: &str) -> String {
        let mut out = String::new();
        self.render_into(indent, 0, &mut out);
        out
    }

    fn render_into(&self, indent: &str, depth: usize, out: &mut String) {
        let inner = indent.repeat(depth + 1);
        match self {
            Json::Scalar(value) => out.push_str(&value.to_string()),
            Json::Object(members) if members.is_empty() => out.push_str("{}"),
            Json::Array(items) if items.is_empty() => out.push_str("[]"),
            Json::Object(members) => {
                out.push_str("{\n");
                for (i, (key, value)) in members.iter().enumerate() {
                    out.push_str(&inner);
                    out.push_str(&serde_json::Value::from(key.as_str()).to_string());
                    out.push_str(": ");
                    value.render_into(indent, depth + 1, out);
                    out.push_str(if i + 1 < members.len() { ",\n" } else { "\n" });
                }
                out.push_str(&indent.repeat(depth));
                out.push('}');
            }
            Json::Array(items) => {
                out.push_str("[\n");
                for (i, item) in items.iter().enumerate() {
                    out.push_str(&inner);
                    item.render_into(indent, depth + 1, out);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                out.push_str(&indent.repeat(depth));
                out.push(']');
            }
        }
    }
}

/// The indentation `text` uses for its first nested line; two spaces when it has none.
pub(super) fn indent_of(text: &str) -> String {
    text.lines()
        .skip(1)
        .map(|line| &line[..line.len() - line.trim_start().len()])
        .find(|lead| !lead.is_empty())
        .unwrap_or("  ")
        .to_string()
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Scalar(v.into()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Scalar(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Scalar(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
        Ok(Json::Scalar(v.into()))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::Scalar(v.into()))
    }
    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::Scalar(v.into()))
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Scalar(serde_json::Value::Null))
    }
    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Scalar(serde_json::Value::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Json>()? {
            members.push((key, value));
        }
        Ok(Json::Object(members))
    }
}
