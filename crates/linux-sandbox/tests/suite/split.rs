//! Split filesystem policies through bubblewrap: the most specific path wins.

use std::path::Path;

use osprey_sandboxing::{Confinement, FileSystemPolicy, FsAccess, FsEntry};
use pretty_assertions::assert_eq;

use super::common::Fixture;

fn split(fx: &Fixture) -> String {
    let secrets = fx.root.join("secrets");
    std::fs::create_dir_all(secrets.join("public")).unwrap();
    std::fs::write(secrets.join("key"), "SECRET\n").unwrap();
    std::fs::write(secrets.join("public/readme"), "open\n").unwrap();
    let fs = FileSystemPolicy::new([
        FsEntry::new("/", FsAccess::Read),
        FsEntry::new("/dev/null", FsAccess::Write),
        FsEntry::new(&fx.root, FsAccess::Write),
        FsEntry::new(fx.root.join(".git"), FsAccess::Read),
        FsEntry::new(&secrets, FsAccess::None),
        FsEntry::new(secrets.join("public"), FsAccess::Write),
        FsEntry::new(fx.outside.join("victim"), FsAccess::None),
    ])
    .unwrap();
    Confinement {
        filesystem: fs,
        network: false,
    }
    .to_json()
}

#[test]
fn most_specific_entry_wins_under_bubblewrap() {
    assert!(
        osprey_sandboxing::find_bwrap(
            Some("/usr/local/bin:/usr/bin:/bin"),
            Path::new("/nonexistent")
        )
        .is_some(),
        "bubblewrap is required for split policies: apt-get install -y bubblewrap"
    );
    let fx = Fixture::new();
    let json = split(&fx);
    let run = fx.run(
        &["--confinement-json", &json],
        r#"cat secrets/key 2>/dev/null && echo "ESCAPED: read secret"
           ls secrets/ | tr '\n' ' '; echo
           cat "$OUT/victim" 2>/dev/null | grep -q original && echo "ESCAPED: read none file"
           echo new > secrets/planted 2>/dev/null && echo "ESCAPED: wrote into none"
           echo ok > secrets/public/written && cat secrets/public/readme
           echo ok > top.txt && echo top-ok
           echo x >> .git/config 2>/dev/null && echo "ESCAPED: .git"
           exit 0"#,
        &[],
    );
    assert!(!run.stdout.contains("ESCAPED"), "{run:?}");
    assert_eq!(run.stdout, "public \nopen\ntop-ok\n", "{run:?}");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(fx.read(&fx.root.join("secrets/public/written")), "ok\n");
    assert!(!fx.root.join("secrets/planted").exists());
    assert_eq!(fx.read(&fx.root.join("secrets/key")), "SECRET\n");
}

#[test]
fn landlock_backend_refuses_split_policies() {
    let fx = Fixture::new();
    let json = split(&fx);
    let run = fx.run(
        &["--confinement-json", &json, "--backend", "landlock"],
        "echo ran",
        &[],
    );
    assert_eq!(run.stdout, "", "{run:?}");
    assert_eq!(run.code, 125, "{run:?}");
    assert!(run.stderr.contains("bubblewrap"), "{run:?}");
}

#[test]
fn auto_backend_picks_bubblewrap_only_when_needed() {
    use osprey_sandboxing::helper_args::{HelperInvocation, HelperMode};
    use osprey_sandboxing::{ExecRequest, LinuxBackend, confine_linux_with};
    let fx = Fixture::new();
    let env: std::collections::HashMap<String, String> = [(
        "PATH".to_string(),
        "/usr/local/bin:/usr/bin:/bin".to_string(),
    )]
    .into();
    let mode = |json: &str| {
        let conf = Confinement::from_json(json).unwrap();
        let req = ExecRequest::new("true", &fx.root).envs(env.clone());
        let out =
            confine_linux_with(req, &conf, Path::new("/opt/osprey"), LinuxBackend::Auto).unwrap();
        let args: Vec<std::ffi::OsString> = out.args.iter().map(Into::into).collect();
        HelperInvocation::parse(&args).unwrap().mode
    };
    assert!(matches!(
        mode(&split(&fx)),
        HelperMode::BubblewrapOuter { .. }
    ));
    let plain = format!(
        r#"{{"filesystem":[{{"path":"/","access":"read"}},{{"path":"{}","access":"write"}}],"network":false}}"#,
        fx.root.display()
    );
    assert_eq!(mode(&plain), HelperMode::Landlock);
}
