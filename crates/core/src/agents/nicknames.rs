//! The names sub-agents are shown by: scientists and philosophers, given in order within a
//! session tree (as Codex does), so the first child is Planck, the second Goodall.

const NICKNAMES: &[&str] = &[
    "Planck",
    "Goodall",
    "Cicero",
    "Laplace",
    "Parfit",
    "Kant",
    "Dalton",
    "Nash",
    "Pauli",
    "Harvey",
    "Curie",
    "Noether",
    "Turing",
    "Hypatia",
    "Darwin",
    "Lovelace",
    "Euler",
    "Faraday",
    "Bohr",
    "Hume",
    "Arendt",
    "Galileo",
    "Kepler",
    "Mendel",
    "Pascal",
    "Ramanujan",
    "Socrates",
    "Tesla",
    "Volta",
    "Wittgenstein",
];

/// The nickname of the `n`th sub-agent (from 0) of one session tree; after the list runs
/// out, names repeat with a number (`Planck 2`).
pub(crate) fn nickname(n: usize) -> String {
    let base = NICKNAMES[n % NICKNAMES.len()];
    match n / NICKNAMES.len() {
        0 => base.to_string(),
        round => format!("{base} {}", round + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_in_codex_order_then_repeat_numbered() {
        assert_eq!(nickname(0), "Planck");
        assert_eq!(nickname(1), "Goodall");
        assert_eq!(nickname(NICKNAMES.len()), "Planck 2");
    }
}
