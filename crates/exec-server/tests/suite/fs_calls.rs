//! The fs methods through the real server, and its roots.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use osprey_exec_server::protocol::{
    CanonicalizeResponse, Metadata, ReadDirectoryResponse, ReadFileResponse, WalkResponse, method,
};
use osprey_exec_server::uri;
use serde_json::{Value, json};

use super::common::{connect, refused_write};

#[tokio::test]
async fn files_are_written_read_listed_copied_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let client = connect(&root, &[]).await;
    let file = uri::from_path(&root.join("sub/a.txt"));
    client
        .call::<Value>(
            method::FS_CREATE_DIRECTORY,
            json!({"path": uri::from_path(&root.join("sub"))}),
        )
        .await
        .unwrap();
    client
        .call::<Value>(
            method::FS_WRITE_FILE,
            json!({"path": file, "dataBase64": BASE64.encode("hello")}),
        )
        .await
        .unwrap();
    let read: ReadFileResponse = client
        .call(method::FS_READ_FILE, json!({"path": file}))
        .await
        .unwrap();
    assert_eq!(BASE64.decode(read.data_base64).unwrap(), b"hello");
    let meta: Metadata = client
        .call(method::FS_GET_METADATA, json!({"path": file}))
        .await
        .unwrap();
    assert!(meta.is_file && !meta.is_directory && !meta.is_symlink);
    assert_eq!(meta.size, 5);
    assert!(meta.modified_at_ms > 0);

    client
        .call::<Value>(
            method::FS_COPY,
            json!({"sourcePath": uri::from_path(&root.join("sub")), "destinationPath": uri::from_path(&root.join("copy")), "recursive": true}),
        )
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("copy/a.txt")).unwrap(),
        "hello"
    );
    let listing: ReadDirectoryResponse = client
        .call(
            method::FS_READ_DIRECTORY,
            json!({"path": uri::from_path(&root)}),
        )
        .await
        .unwrap();
    let names: Vec<&str> = listing
        .entries
        .iter()
        .map(|e| e.file_name.as_str())
        .collect();
    assert_eq!(names, ["copy", "sub"]);
    let walk: WalkResponse = client
        .call(
            method::FS_WALK,
            json!({"path": uri::from_path(&root), "options": {"maxDepth": 6, "maxDirectories": 2000, "maxEntries": 20000, "followDirectorySymlinks": true, "pruneHiddenDirectories": true}}),
        )
        .await
        .unwrap();
    assert_eq!(walk.entries.len(), 4, "{walk:?}");
    assert!(!walk.truncated);
    let canonical: CanonicalizeResponse = client
        .call(
            method::FS_CANONICALIZE,
            json!({"path": format!("{}/sub/../copy", uri::from_path(&root))}),
        )
        .await
        .unwrap();
    assert_eq!(canonical.path, uri::from_path(&root.join("copy")));

    let not_recursive = client
        .call::<Value>(
            method::FS_REMOVE,
            json!({"path": uri::from_path(&root.join("copy"))}),
        )
        .await
        .unwrap_err();
    assert!(
        not_recursive.to_string().contains("-32004"),
        "{not_recursive}"
    );
    client
        .call::<Value>(
            method::FS_REMOVE,
            json!({"path": uri::from_path(&root.join("copy")), "recursive": true}),
        )
        .await
        .unwrap();
    assert!(!root.join("copy").exists());
    client
        .call::<Value>(
            method::FS_REMOVE,
            json!({"path": uri::from_path(&root.join("gone")), "force": true}),
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn writes_stay_inside_the_roots_and_reads_can_be_restricted() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("root");
    let outside = base.join("outside");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "s").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
    let root_arg = root.to_string_lossy().into_owned();

    let client = connect(&root, &["--root", &root_arg]).await;
    for target in [outside.join("x.txt"), root.join("link/x.txt")] {
        let err = refused_write(&client, &target).await;
        assert!(
            err.contains("outside the directories this exec server may write"),
            "{err}"
        );
    }
    assert!(!outside.join("x.txt").exists());
    let copy_out = client
        .call::<Value>(
            method::FS_COPY,
            json!({"sourcePath": uri::from_path(&outside.join("secret.txt")), "destinationPath": uri::from_path(&outside.join("copy.txt"))}),
        )
        .await
        .unwrap_err();
    assert!(copy_out.to_string().contains("may write"), "{copy_out}");
    // Reads are allowed anywhere by default …
    client
        .call::<ReadFileResponse>(
            method::FS_READ_FILE,
            json!({"path": uri::from_path(&outside.join("secret.txt"))}),
        )
        .await
        .unwrap();
    drop(client);
    // … and only inside the roots with --restrict-reads, symlinks included.
    let strict = connect(&root, &["--root", &root_arg, "--restrict-reads"]).await;
    for target in [outside.join("secret.txt"), root.join("link/secret.txt")] {
        let err = strict
            .call::<Value>(
                method::FS_READ_FILE,
                json!({"path": uri::from_path(&target)}),
            )
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("may read"), "{err}");
    }
}

#[tokio::test]
async fn copies_and_writes_cannot_be_steered_out_by_symlinks_or_into_git() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("root");
    let outside = base.join("outside");
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(root.join("src/a.txt"), "a").unwrap();
    std::fs::write(outside.join("secret"), "s").unwrap();
    // A dangling link to a new file outside, a link to an outside folder planted in a
    // destination tree, and a source link to an outside file.
    std::os::unix::fs::symlink(outside.join("new.txt"), root.join("dangling")).unwrap();
    std::fs::create_dir_all(root.join("dst")).unwrap();
    std::fs::create_dir_all(root.join("src/sub")).unwrap();
    std::fs::write(root.join("src/sub/b.txt"), "b").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("dst/sub")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret"), root.join("src/link")).unwrap();
    let root_arg = root.to_string_lossy().into_owned();
    let client = connect(&root, &["--root", &root_arg]).await;

    client
        .call::<Value>(
            method::FS_COPY,
            json!({"sourcePath": uri::from_path(&root.join("src/a.txt")), "destinationPath": uri::from_path(&root.join("dangling"))}),
        )
        .await
        .unwrap();
    assert!(
        !outside.join("new.txt").exists(),
        "the copy followed a dangling link out"
    );
    assert_eq!(std::fs::read_to_string(root.join("dangling")).unwrap(), "a");

    let planted = client
        .call::<Value>(
            method::FS_COPY,
            json!({"sourcePath": uri::from_path(&root.join("src")), "destinationPath": uri::from_path(&root.join("dst")), "recursive": true}),
        )
        .await
        .unwrap_err();
    assert!(planted.to_string().contains("may write"), "{planted}");
    assert!(
        !outside.join("b.txt").exists(),
        "the copy went through a planted link"
    );

    client
        .call::<Value>(
            method::FS_COPY,
            json!({"sourcePath": uri::from_path(&root.join("src")), "destinationPath": uri::from_path(&root.join("copy")), "recursive": true}),
        )
        .await
        .unwrap();
    let copied = std::fs::symlink_metadata(root.join("copy/link")).unwrap();
    assert!(
        copied.file_type().is_symlink(),
        "a source symlink was followed, not copied"
    );
    let into_itself = client
        .call::<Value>(
            method::FS_COPY,
            json!({"sourcePath": uri::from_path(&root.join("src")), "destinationPath": uri::from_path(&root.join("src/deeper")), "recursive": true}),
        )
        .await
        .unwrap_err();
    assert!(
        into_itself.to_string().contains("into itself"),
        "{into_itself}"
    );

    for target in [
        root.join(".git/hooks/pre-commit"),
        root.join(".osprey/config.toml"),
    ] {
        let err = refused_write(&client, &target).await;
        assert!(err.contains("read-only"), "{err}");
        assert!(!target.exists());
    }
    let remove_root = client
        .call::<Value>(
            method::FS_REMOVE,
            json!({"path": uri::from_path(&root), "recursive": true}),
        )
        .await
        .unwrap_err();
    assert!(
        remove_root.to_string().contains("cannot be removed"),
        "{remove_root}"
    );
    assert!(root.join("src/a.txt").exists());
}

#[tokio::test]
async fn devices_are_not_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let client = connect(dir.path(), &[]).await;
    let err = client
        .call::<Value>(method::FS_READ_FILE, json!({"path": "file:///dev/zero"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a regular file"), "{err}");
}
