//! Closed sets of string values (`approval_policy = "on-request"`), with error messages that
//! list every accepted spelling.
//!
//! The protocol's enums derive `Deserialize`, whose messages for a wrong type
//! (`approval_policy = 3`) do not say which strings would work. Config fields wrap them in
//! [`Pick`], which accepts exactly the spellings in [`Choice::CHOICES`] (plus aliases) and
//! names them all when it refuses a value.

use std::fmt;
use std::marker::PhantomData;

use osprey_protocol::{AskForApproval, ReasoningEffort, SandboxMode};
use serde::de::{self, Deserialize, Deserializer, Unexpected, Visitor};

/// An enum spelled as one of a fixed list of strings.
pub trait Choice: Copy + PartialEq + 'static {
    /// Canonical spellings, in the order error messages list them.
    const CHOICES: &'static [(&'static str, Self)];
    /// Extra accepted spellings that are not advertised.
    const ALIASES: &'static [(&'static str, Self)] = &[];

    /// The canonical spelling of `self`.
    fn name(self) -> &'static str {
        Self::CHOICES
            .iter()
            .find(|(_, v)| *v == self)
            .map_or("", |(n, _)| n)
    }

    /// Parses a spelling (canonical or alias).
    fn from_name(s: &str) -> Option<Self> {
        Self::CHOICES
            .iter()
            .chain(Self::ALIASES)
            .find(|(n, _)| *n == s)
            .map(|(_, v)| *v)
    }

    /// "one of `a`, `b`, `c`".
    fn expected() -> String {
        let names: Vec<String> = Self::CHOICES
            .iter()
            .map(|(n, _)| format!("`{n}`"))
            .collect();
        format!("one of {}", names.join(", "))
    }
}

/// A config value restricted to one of `T`'s spellings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pick<T>(pub T);

impl<'de, T: Choice> Deserialize<'de> for Pick<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(PickVisitor(PhantomData))
    }
}

struct PickVisitor<T>(PhantomData<T>);

impl<T: Choice> Visitor<'_> for PickVisitor<T> {
    type Value = Pick<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&T::expected())
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        T::from_name(v)
            .map(Pick)
            .ok_or_else(|| E::invalid_value(Unexpected::Str(v), &self))
    }
}

impl Choice for AskForApproval {
    const CHOICES: &'static [(&'static str, Self)] = &[
        ("untrusted", Self::Untrusted),
        ("on-failure", Self::OnFailure),
        ("on-request", Self::OnRequest),
        ("never", Self::Never),
    ];
    const ALIASES: &'static [(&'static str, Self)] = &[("unless-trusted", Self::Untrusted)];
}

impl Choice for SandboxMode {
    const CHOICES: &'static [(&'static str, Self)] = &[
        ("read-only", Self::ReadOnly),
        ("workspace-write", Self::WorkspaceWrite),
        ("danger-full-access", Self::DangerFullAccess),
    ];
}

impl Choice for ReasoningEffort {
    const CHOICES: &'static [(&'static str, Self)] = &[
        ("none", Self::None),
        ("minimal", Self::Minimal),
        ("low", Self::Low),
        ("medium", Self::Medium),
        ("high", Self::High),
        ("xhigh", Self::Xhigh),
    ];
}

/// Declares a config enum with its spellings, `Display`, `Serialize` and [`Choice`].
macro_rules! choice_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        impl $crate::choice::Choice for $name {
            const CHOICES: &'static [(&'static str, Self)] = &[ $( ($text, Self::$variant) ),+ ];
        }

        impl $name {
            pub fn as_str(self) -> &'static str {
                match self { $( Self::$variant => $text ),+ }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::choice::Pick::<Self>::deserialize(d).map(|p| p.0)
            }
        }
    };
}
pub(crate) use choice_enum;

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize)]
    struct T {
        v: Pick<AskForApproval>,
    }

    #[test]
    fn accepts_names_and_aliases() {
        let t: T = toml::from_str("v = \"unless-trusted\"").unwrap();
        assert_eq!(t.v.0, AskForApproval::Untrusted);
        assert_eq!(AskForApproval::Untrusted.name(), "untrusted");
    }

    #[test]
    fn wrong_type_lists_choices() {
        let err = toml::from_str::<T>("v = 3").err().unwrap();
        assert_eq!(
            err.message(),
            "invalid type: integer `3`, expected one of `untrusted`, `on-failure`, \
             `on-request`, `never`"
        );
        let err = toml::from_str::<T>("v = \"sometimes\"").err().unwrap();
        assert!(
            err.message()
                .contains("invalid value: string \"sometimes\"")
        );
        assert!(err.span().is_some());
    }
}
