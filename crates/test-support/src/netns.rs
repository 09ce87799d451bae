//! Test hosts in network namespaces of their own (`ip netns` + a veth pair): a server
//! started in one is reached over a non-loopback address, as a real remote machine is.
//! Needs root (the CI machine is); [`is_root`] lets a test skip with a message otherwise.

/// Runs `ip ARGS…`; the error names the command and what `ip` said.
#[expect(
    clippy::disallowed_methods,
    reason = "the test hosts are set up with ip(8)"
)]
pub fn ip(args: &[&str]) -> Result<(), String> {
    let out = std::process::Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip {}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A network namespace with a veth pair to this host; deleted (with the pair) on drop.
#[derive(Debug)]
pub struct TestHost {
    /// The namespace's name, for `ip netns exec NAME …`.
    pub name: String,
    /// The address of the namespace's end, e.g. `10.231.42.2`.
    pub address: String,
    /// The interface name inside the namespace.
    pub interface: String,
}

impl Drop for TestHost {
    fn drop(&mut self) {
        let _ = ip(&["netns", "del", &self.name]);
    }
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

impl TestHost {
    /// A new namespace on the /30 subnet `10.231.<subnet>.0`; `tag` (a few characters)
    /// keeps names of concurrent tests apart.
    pub fn create(tag: &str, subnet: u8) -> Result<Self, String> {
        let pid = std::process::id() % 100_000;
        let name = format!("os{tag}{pid}");
        let host_if = format!("h{tag}{pid}");
        let ns_if = format!("n{tag}{pid}");
        ip(&["netns", "add", &name])?;
        let host = Self {
            name: name.clone(),
            address: format!("10.231.{subnet}.2"),
            interface: ns_if.clone(),
        };
        let host_addr = format!("10.231.{subnet}.1/30");
        let ns_addr = format!("10.231.{subnet}.2/30");
        ip(&[
            "link", "add", &host_if, "type", "veth", "peer", "name", &ns_if,
        ])?;
        ip(&["link", "set", &ns_if, "netns", &name])?;
        ip(&["addr", "add", &host_addr, "dev", &host_if])?;
        ip(&["link", "set", &host_if, "up"])?;
        ip(&[
            "netns", "exec", &name, "ip", "addr", "add", &ns_addr, "dev", &ns_if,
        ])?;
        ip(&["netns", "exec", &name, "ip", "link", "set", &ns_if, "up"])?;
        ip(&["netns", "exec", &name, "ip", "link", "set", "lo", "up"])?;
        Ok(host)
    }
}
