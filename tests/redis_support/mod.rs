//! Redis servers started by the tests on loopback ports (a single server,
//! a three-primary cluster, a primary with a replica under one sentinel),
//! each stopped and its directory removed on
//! drop. Skips with a message when `redis-server` is not installed, unless
//! `AGENTSIG_REQUIRE_INTEROP=1` (CI), which makes a missing server a failure.
#![allow(dead_code)]

use agentsig::replay::RedisReplayStore;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

pub fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("agentsig-redis-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A loopback port free now, below 55536 so that a cluster node's bus port
/// (10000 above) exists too.
fn free_port() -> u16 {
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        if port < 55536 {
            return port;
        }
    }
}

pub fn redis_server() -> Option<PathBuf> {
    find_tool("redis-server", "")
}

/// `which BIN`, without depending on `which` itself; `None`, with
/// `SKIPPED{label}: …` printed, when it is missing, unless
/// `AGENTSIG_REQUIRE_INTEROP=1` (CI), which makes it a failure.
pub fn find_tool(bin: &str, label: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(bin))
            .find(|c| c.is_file())
    });
    if found.is_some() {
        return found;
    }
    if std::env::var("AGENTSIG_REQUIRE_INTEROP").as_deref() == Ok("1") {
        panic!("{bin} not found and AGENTSIG_REQUIRE_INTEROP=1 (apt-get install -y redis-server redis-tools)");
    }
    // Written to the real stderr (not eprintln!, which the harness captures)
    // so the skip is visible in `cargo test` output.
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED{label}: {bin} not found (apt-get install -y redis-server redis-tools)"
    );
    None
}

/// A redis-server child on 127.0.0.1, killed on drop.
pub struct Server {
    pub bin: PathBuf,
    pub dir: PathBuf,
    pub port: u16,
    pub extra: Vec<String>,
    pub password: Option<String>,
    pub child: Option<Child>,
}

impl Server {
    pub fn start(name: &str) -> Option<Server> {
        Server::start_with(name, None)
    }

    /// With `password`, the server requires it (`--requirepass`).
    pub fn start_with(name: &str, password: Option<&str>) -> Option<Server> {
        let extra = password
            .map(|p| vec!["--requirepass".to_owned(), p.to_owned()])
            .unwrap_or_default();
        Server::start_args(name, extra, password)
    }

    /// With `extra` arguments (a cluster node, a replica).
    pub fn start_args(name: &str, extra: Vec<String>, password: Option<&str>) -> Option<Server> {
        let bin = redis_server()?;
        let mut s = Server {
            bin,
            dir: tmp(name),
            port: 0,
            extra,
            password: password.map(str::to_owned),
            child: None,
        };
        // A port found free may be taken again before redis-server binds
        // it, and a cluster node also binds the port 10000 above (its bus):
        // a server that exits at once is started again on another port.
        for _ in 0..5 {
            s.port = free_port();
            if s.spawn_and_wait() {
                return Some(s);
            }
        }
        panic!("redis-server did not start on five ports");
    }

    pub fn url(&self) -> String {
        match &self.password {
            Some(p) => {
                let enc: String = p
                    .bytes()
                    .map(|b| {
                        if b.is_ascii_alphanumeric() {
                            (b as char).to_string()
                        } else {
                            format!("%{b:02X}")
                        }
                    })
                    .collect();
                format!("redis://:{enc}@127.0.0.1:{}/0", self.port)
            }
            None => format!("redis://127.0.0.1:{}/0", self.port),
        }
    }

    /// Start (again) on the same port and data directory.
    pub fn restart(&mut self) {
        assert!(
            self.spawn_and_wait(),
            "redis-server on port {} did not start",
            self.port
        );
    }

    /// Start on `self.port`; true once it answers PING, false when it
    /// exited first (its port was taken).
    fn spawn_and_wait(&mut self) -> bool {
        let child = Command::new(&self.bin)
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--dir",
            ])
            .arg(&self.dir)
            .args(&self.extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        // Wait until it answers PING (readiness, not a timing assertion).
        let probe = RedisReplayStore::open(&self.url()).unwrap();
        for _ in 0..200 {
            if probe.ping().is_ok() {
                return true;
            }
            if let Some(c) = &mut self.child {
                if matches!(c.try_wait(), Ok(Some(_))) {
                    self.child = None;
                    return false;
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        false
    }

    /// Stop gracefully (SIGTERM: the AOF is flushed) and wait.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-TERM", &c.id().to_string()])
                .status();
            let _ = c.wait();
        }
    }

    /// Send `signal` (`STOP`, `CONT`, `KILL`) to the server process.
    pub fn signal(&self, signal: &str) {
        if let Some(c) = &self.child {
            let st = Command::new("kill")
                .args([&format!("-{signal}"), &c.id().to_string()])
                .status()
                .unwrap();
            assert!(st.success(), "kill -{signal}");
        }
    }

    pub fn cli(&self, args: &[&str]) -> String {
        let o = Command::new("redis-cli")
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(self.password.iter().flat_map(|p| ["-a", p.as_str()]))
            .args(args)
            .output()
            .unwrap();
        String::from_utf8(o.stdout).unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            // A stopped server (SIGSTOP) is resumed first, then killed.
            let _ = Command::new("kill")
                .args(["-CONT", &c.id().to_string()])
                .status();
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn cluster_tools(what: &str) -> Option<()> {
    let label = format!(" redis cluster {what}");
    find_tool("redis-server", &label)?;
    find_tool("redis-cli", &label).map(drop)
}

/// Poll `f` (a readiness probe, not a timing assertion) until it holds.
pub fn until(what: &str, mut f: impl FnMut() -> bool) {
    for _ in 0..400 {
        if f() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("{what}: not reached");
}

/// Three primaries, no replicas (`redis-cli --cluster create ...
/// --cluster-replicas 0`), each killed and its directory removed on drop.
pub struct Cluster {
    pub nodes: Vec<Server>,
}

/// `redis-cli --cluster ARGS`, which must succeed.
pub fn redis_cli_cluster(args: &[&str]) {
    let o = Command::new("redis-cli")
        .arg("--cluster")
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A cluster-enabled redis-server.
pub fn cluster_node(name: &str) -> Server {
    Server::start_args(
        name,
        [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            "2000",
        ]
        .map(str::to_owned)
        .to_vec(),
        None,
    )
    .unwrap()
}

impl Cluster {
    pub fn start(name: &str) -> Option<Cluster> {
        cluster_tools(name)?;
        let nodes: Vec<Server> = (0..3)
            .map(|i| cluster_node(&format!("{name}-{i}")))
            .collect();
        let c = Cluster { nodes };
        let addrs: Vec<String> = c
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        redis_cli_cluster(
            &[
                &["create"],
                &addrs.iter().map(String::as_str).collect::<Vec<_>>()[..],
                &["--cluster-replicas", "0", "--cluster-yes"],
            ]
            .concat(),
        );
        c.wait_ok();
        Some(c)
    }

    /// Every node reports `cluster_state:ok`.
    pub fn wait_ok(&self) {
        until("cluster_state:ok", || {
            self.nodes
                .iter()
                .all(|n| n.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok"))
        });
    }

    /// A replica of primary `of`, joined with `redis-cli --cluster
    /// add-node ... --cluster-slave`, its link up.
    pub fn add_replica(&self, name: &str, of: usize) -> Server {
        let r = cluster_node(name);
        let primary = &self.nodes[of];
        let id = primary.cli(&["CLUSTER", "MYID"]).trim().to_owned();
        redis_cli_cluster(&[
            "add-node",
            &format!("127.0.0.1:{}", r.port),
            &format!("127.0.0.1:{}", primary.port),
            "--cluster-slave",
            "--cluster-master-id",
            &id,
        ]);
        until("cluster replica link up", || {
            r.cli(&["INFO", "replication"])
                .contains("master_link_status:up")
        });
        self.wait_ok();
        r
    }

    pub fn url(&self, query: &str) -> String {
        let nodes: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        format!("redis+cluster://{}{query}", nodes.join(","))
    }

    /// The replay keys each node holds.
    pub fn replay_keys(&self) -> Vec<usize> {
        self.nodes
            .iter()
            .map(|n| {
                n.cli(&["--scan", "--pattern", "agentsig:replay:*"])
                    .lines()
                    .count()
            })
            .collect()
    }
}

/// A primary and one replica (`--replicaof`), the link up.
pub fn primary_and_replica(name: &str) -> Option<(Server, Server)> {
    let primary = Server::start(&format!("{name}-p"))?;
    let replica = Server::start_args(
        &format!("{name}-r"),
        vec![
            "--replicaof".into(),
            "127.0.0.1".into(),
            primary.port.to_string(),
        ],
        None,
    )?;
    until("replica link up", || {
        replica
            .cli(&["INFO", "replication"])
            .contains("master_link_status:up")
    });
    Some((primary, replica))
}

/// A primary and one replica under a sentinel that knows them both, or
/// `None` (a skip) when `redis-server` or `redis-cli` is missing.
pub fn sentinel_with_replica(name: &str) -> Option<(Server, Server, Sentinel)> {
    cluster_tools(&format!("sentinel {name}"))?;
    let (primary, replica) = primary_and_replica(name)?;
    let sentinel = Sentinel::start(&format!("{name}-s"), &primary)?;
    until("the sentinel knows the primary and its replica", || {
        sentinel.primary_port() == primary.port.to_string()
            && sentinel
                .cli(&["SENTINEL", "REPLICAS", "agentsig-primary"])
                .contains(&replica.port.to_string())
    });
    Some((primary, replica, sentinel))
}

/// A sentinel (`redis-server CONF --sentinel`) monitoring one primary as
/// `agentsig-primary`, killed and its directory removed on drop.
pub struct Sentinel {
    /// Its port.
    pub port: u16,
    dir: PathBuf,
    child: Child,
}

impl Drop for Sentinel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Sentinel {
    /// A sentinel monitoring `primary`, or `None` without `redis-server`.
    pub fn start(name: &str, primary: &Server) -> Option<Sentinel> {
        let bin = redis_server()?;
        let dir = tmp(name);
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let conf = dir.join("sentinel.conf");
        std::fs::write(
            &conf,
            format!(
                "port {port}\nbind 127.0.0.1\ndir {}\nsentinel monitor agentsig-primary 127.0.0.1 {} 1\nsentinel down-after-milliseconds agentsig-primary 1000\nsentinel failover-timeout agentsig-primary 10000\n",
                dir.display(),
                primary.port
            ),
        )
        .unwrap();
        let child = Command::new(bin)
            .arg(&conf)
            .arg("--sentinel")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Some(Sentinel { port, dir, child })
    }

    /// `redis-cli` against this sentinel: its standard output.
    pub fn cli(&self, args: &[&str]) -> String {
        let o = Command::new("redis-cli")
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8(o.stdout).unwrap()
    }

    /// The store URL that follows the primary this sentinel names.
    pub fn url(&self) -> String {
        format!("redis+sentinel://127.0.0.1:{}/agentsig-primary", self.port)
    }

    /// The port of the primary it names now.
    pub fn primary_port(&self) -> String {
        self.cli(&["SENTINEL", "GET-MASTER-ADDR-BY-NAME", "agentsig-primary"])
            .lines()
            .nth(1)
            .unwrap_or("")
            .to_owned()
    }
}
