//! Network attempts: TCP to a listener this test opens on 127.0.0.1, binding, and UNIX
//! sockets (pathname and abstract) of services outside the sandbox.

use std::io::ErrorKind;
use std::net::TcpListener;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};

use pretty_assertions::assert_eq;

use super::common::{CONFINED, Fixture};

const CONNECT: &str = r#"
(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && echo "ESCAPED: bash tcp"
python3 - <<'PY'
import os, socket
def attempt(label, fn):
    try:
        fn()
        print("ESCAPED:", label)
    except OSError:
        pass
port = int(os.environ["PORT"])
attempt("tcp4", lambda: socket.create_connection(("127.0.0.1", port), timeout=5))
attempt("udp bind", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).bind(("127.0.0.1", 0)))
attempt("tcp bind", lambda: socket.socket().bind(("127.0.0.1", 0)))
attempt("tcp6", lambda: socket.socket(socket.AF_INET6).connect(("::1", port)))
attempt("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
attempt("unix path", lambda: socket.socket(socket.AF_UNIX).connect(os.environ["SOCK"]))
attempt("unix abstract", lambda: socket.socket(socket.AF_UNIX).connect("\0" + os.environ["ABSTRACT"]))
attempt("unix dgram", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"x", os.environ["SOCK"]))
attempt("unix bind", lambda: socket.socket(socket.AF_UNIX).bind(os.environ["TMPDIR"] + "/s"))
PY
exit 0
"#;

struct Listeners {
    tcp: TcpListener,
    unix: UnixListener,
    abstract_: UnixListener,
    env: Vec<(&'static str, String)>,
}

fn listeners(fx: &Fixture, tag: &str) -> Listeners {
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let sock = fx.outside.join("svc.sock");
    let unix = UnixListener::bind(&sock).unwrap();
    unix.set_nonblocking(true).unwrap();
    let name = format!("osprey-sbx-test-{}-{tag}", std::process::id());
    let abstract_ =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(&name).unwrap()).unwrap();
    abstract_.set_nonblocking(true).unwrap();
    let env = vec![
        ("PORT", tcp.local_addr().unwrap().port().to_string()),
        ("SOCK", sock.display().to_string()),
        ("ABSTRACT", name),
    ];
    Listeners {
        tcp,
        unix,
        abstract_,
        env,
    }
}

fn nothing_connected(l: &Listeners) -> bool {
    let would_block =
        |r: std::io::Result<()>| matches!(r, Err(e) if e.kind() == ErrorKind::WouldBlock);
    would_block(l.tcp.accept().map(drop))
        && would_block(l.unix.accept().map(drop))
        && would_block(l.abstract_.accept().map(drop))
}

#[test]
fn network_is_off_unless_allowed() {
    for (i, (name, policy)) in CONFINED.iter().enumerate() {
        let fx = Fixture::new();
        let l = listeners(&fx, &i.to_string());
        let run = fx.run(policy, CONNECT, &l.env);
        assert!(!run.stdout.contains("ESCAPED"), "{name}: {run:?}");
        assert_eq!(run.code, 0, "{name}: {run:?}");
        assert!(nothing_connected(&l), "{name}: a listener saw a connection");
    }
}

#[test]
fn network_access_allows_connections() {
    // The control for the test above: with `--network` the same attempts succeed, so a
    // broken probe cannot pass for a working sandbox.
    let fx = Fixture::new();
    let l = listeners(&fx, "on");
    let run = fx.run(
        &["--policy", "workspace-write", "--network"],
        r#"(exec 3<>"/dev/tcp/127.0.0.1/$PORT") && echo tcp-ok
           python3 -c 'import os,socket; socket.socket(socket.AF_UNIX).connect(os.environ["SOCK"])' && echo unix-ok"#,
        &l.env,
    );
    assert_eq!(run.stdout, "tcp-ok\nunix-ok\n", "{run:?}");
    assert!(l.tcp.accept().is_ok());
    assert!(l.unix.accept().is_ok());
}
