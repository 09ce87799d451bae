//! `osprey mcp …` through `run_mcp_command`, on a config file a person wrote. (The command
//! line itself is tested in the `cli` crate.)

use osprey_mcp::McpCommand;
use osprey_mcp::config_edit::NewServer;
use osprey_mcp::run_mcp_command;
use pretty_assertions::assert_eq;

fn run(home: &std::path::Path, command: McpCommand) -> (i32, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_mcp_command(command, home, &mut out, &mut err);
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

#[test]
fn add_and_remove_leave_the_rest_of_the_file_alone() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("config.toml");
    let original = "\
# Osprey settings
model = \"gpt-5\"   # the usual

[mcp_servers.keep]
# a comment inside the table
command = \"keep-server\"
args = [\"--flag\"] # trailing

[profiles.fast]
model = \"o4-mini\"
";
    std::fs::write(&path, original).unwrap();

    let (code, _, err) = run(
        home.path(),
        McpCommand::Add {
            name: "everything".to_owned(),
            server: NewServer::Stdio {
                command: "npx".to_owned(),
                args: vec![
                    "-y".to_owned(),
                    "@modelcontextprotocol/server-everything".to_owned(),
                ],
                env: Default::default(),
            },
        },
    );
    assert_eq!((code, err.as_str()), (0, ""));
    // The new table goes next to its sibling; every other line is untouched.
    let added = std::fs::read_to_string(&path).unwrap();
    let new_entry = "[mcp_servers.everything]\ncommand = \"npx\"\n\
                     args = [\"-y\", \"@modelcontextprotocol/server-everything\"]\n\n";
    assert_eq!(added.replacen(new_entry, "", 1), original, "{added}");

    let (code, out, _) = run(home.path(), McpCommand::List { json: false });
    assert_eq!(code, 0);
    assert!(out.contains("everything  npx"), "{out}");
    assert!(out.contains("keep        keep-server  --flag"), "{out}");

    let (code, _, _) = run(
        home.path(),
        McpCommand::Remove {
            name: "everything".to_owned(),
        },
    );
    assert_eq!(code, 0);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap().trim_end(),
        original.trim_end()
    );
}

#[test]
fn invalid_names_are_refused_with_the_rule() {
    let home = tempfile::tempdir().unwrap();
    let (code, _, err) = run(
        home.path(),
        McpCommand::Add {
            name: "my.server".to_owned(),
            server: NewServer::Http {
                url: "http://h/mcp".to_owned(),
                bearer_token_env_var: None,
            },
        },
    );
    assert_eq!(code, 1);
    assert!(err.contains("letters, digits, `-` and `_`"), "{err}");
    assert!(!home.path().join("config.toml").exists());
}
