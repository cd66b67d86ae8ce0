//! `brain mcp` in real sessions over stdio: one with rmcp's client (initialize, list tools,
//! call them), one written by hand over the pipes to pin down the wire itself (protocol
//! version echoed, every stdout line JSON-RPC, clean exit when stdin closes).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::{json, Value};

use crate::harness::{eventually, Brain};

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.as_str())
        .collect()
}

fn call(name: &'static str, args: Value) -> CallToolRequestParams {
    let Value::Object(map) = args else {
        panic!("arguments must be an object")
    };
    CallToolRequestParams::new(name).with_arguments(map)
}

/// Calls `name` with `args` (which ask for `json`) and reads the answer's JSON object.
async fn json_of(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    name: &'static str,
    args: Value,
) -> Value {
    let r = client.call_tool(call(name, args)).await.unwrap();
    serde_json::from_str(&text(&r)).unwrap_or_else(|e| panic!("{name}: {e}: {}", text(&r)))
}

#[tokio::test(flavor = "current_thread")]
async fn a_client_session_lists_and_calls_the_tools() {
    let b = Brain::example();
    std::fs::write(b.tmp.path().join("secret.md"), "not for the assistant").unwrap();
    // A named pipe named like a note: `similar` must not offer to read it as a draft.
    crate::harness::mkfifo(&b.root.join("lore/fifo.md"));
    let mut cmd = b.command();
    cmd.arg("mcp");
    let transport = TokioChildProcess::new(tokio::process::Command::from(cmd)).unwrap();
    let client = ().serve(transport).await.expect("initialize");

    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("brain")
    );
    assert!(info.capabilities.tools.is_some());
    assert!(info
        .instructions
        .as_deref()
        .unwrap_or("")
        .contains(b.root.to_str().unwrap()));

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        ["check", "get", "links", "search", "similar", "status"]
    );
    for tool in &tools {
        let a = tool
            .annotations
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no annotations", tool.name));
        assert_eq!(
            (a.read_only_hint, a.open_world_hint),
            (Some(true), Some(false)),
            "{}",
            tool.name
        );
        assert!(
            tool.description.as_deref().unwrap_or("").len() > 60,
            "{} needs a description",
            tool.name
        );
        assert_eq!(
            tool.input_schema.get("type"),
            Some(&json!("object")),
            "{}",
            tool.name
        );
    }
    let schema = |name: &str| {
        Value::Object((*tools.iter().find(|t| t.name == name).unwrap().input_schema).clone())
    };
    let search = schema("search");
    assert_eq!(search["required"], json!(["query"]), "{search:#}");
    // `null` is an argument left out, as the server takes it: a client that checks its
    // arguments against the schema must let it through, for every optional one.
    assert_eq!(
        search["properties"]["mode"]["enum"],
        json!(["hybrid", "bm25", "semantic", null]),
        "{search:#}"
    );
    for tool in ["search", "get", "similar", "check", "status", "links"] {
        let s = schema(tool);
        let required = s["required"].as_array().cloned().unwrap_or_default();
        for (name, prop) in s["properties"].as_object().unwrap() {
            if !required.contains(&json!(name)) {
                assert!(
                    prop["type"]
                        .as_array()
                        .is_some_and(|t| t.contains(&json!("null"))),
                    "{tool}.{name} refuses null: {prop}"
                );
            }
        }
    }
    assert_eq!(
        search["properties"]["top"]["minimum"],
        json!(1),
        "{search:#}"
    );
    assert_eq!(
        search["properties"]["top"]["maximum"],
        json!(100),
        "{search:#}"
    );
    for field in ["type", "tag", "json"] {
        assert!(
            search["properties"].get(field).is_some(),
            "search lacks {field}: {search:#}"
        );
    }
    assert_eq!(search["additionalProperties"], json!(false));
    let get = schema("get");
    assert_eq!(get["required"], json!(["path"]), "{get:#}");
    for field in ["line", "count"] {
        assert!(
            get["properties"].get(field).is_some(),
            "get lacks {field}: {get:#}"
        );
    }

    // search, then read the passage the first hit points at
    let r = client
        .call_tool(call(
            "search",
            json!({"query": "busy_timeout", "mode": "bm25", "top": 3}),
        ))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let out = text(&r);
    let first = out.lines().next().unwrap();
    assert!(
        first.starts_with("[1] [lore] lore/sqlite-busy-timeout.md:"),
        "{out}"
    );
    assert!(out.contains("(bm25="), "{out}");
    let line: u32 = first.rsplit(':').next().unwrap().parse().unwrap();

    let r = client
        .call_tool(call(
            "get",
            json!({"path": "lore/sqlite-busy-timeout.md", "line": line, "count": 3}),
        ))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let out = text(&r);
    assert!(
        out.starts_with(&format!(
            "lore/sqlite-busy-timeout.md:{line}-{} (of 35 lines)\n",
            line + 2
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "(file: {})",
            b.root.join("lore/sqlite-busy-timeout.md").display()
        )),
        "{out}"
    );

    // the same answers as --json, when asked
    let r = client
        .call_tool(call(
            "search",
            json!({"query": "retry jitter", "json": true, "type": "lore"}),
        ))
        .await
        .unwrap();
    let j: Value = serde_json::from_str(&text(&r)).expect("search json");
    assert_eq!(j["mode"], "bm25", "no model here: hybrid falls back");
    assert!(j["notice"].as_str().unwrap().contains("brain model fetch"));
    assert!(j["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["type"] == "lore"));
    let j = json_of(
        &client,
        "get",
        json!({"path": "lore/sqlite-busy-timeout.md:16:2", "json": true}),
    )
    .await;
    assert_eq!(
        (j["start_line"].as_u64(), j["end_line"].as_u64()),
        (Some(16), Some(17))
    );
    // a read through the MCP tool is logged as one
    let usage = b.json(&["stats"]);
    assert_eq!(usage["reads_by_via"]["mcp"], 2, "both gets so far: {usage}");

    // a whole note is its head and the line to read on from, never a flood
    let long: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(b.root.join("lore/long.md"), long).unwrap();
    let r = client
        .call_tool(call("get", json!({"path": "lore/long.md"})))
        .await
        .unwrap();
    let out = text(&r);
    assert!(
        out.starts_with("lore/long.md:1-400 (of 1000 lines)\n"),
        "{out}"
    );
    assert!(
        out.trim_end()
            .ends_with("note: 600 more lines: call get with line=401 (and count) to read on"),
        "{out}"
    );
    let j = json_of(
        &client,
        "get",
        json!({"path": "lore/long.md", "json": true}),
    )
    .await;
    assert_eq!(
        (j["end_line"].as_u64(), j["total_lines"].as_u64()),
        (Some(400), Some(1000))
    );
    assert_eq!(
        j["notice"],
        "600 more lines: call get with line=401 (and count) to read on"
    );
    std::fs::remove_file(b.root.join("lore/long.md")).unwrap();

    // the knowledge-base tools: the audit and a note's links
    let r = client.call_tool(call("check", json!({}))).await.unwrap();
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert!(text(&r).contains("broken links (1)"), "{}", text(&r));
    let r = client
        .call_tool(call(
            "links",
            json!({"path": "research-link/dense-passage-retrieval.md", "json": true}),
        ))
        .await
        .unwrap();
    let j: Value = serde_json::from_str(&text(&r)).expect("links json");
    assert_eq!(
        j["incoming"][0]["path"],
        "research-link/hnsw-malkov-yashunin.md"
    );
    // The same note named as the other tools take it: its absolute path, through `..`, or
    // as a search hit prints it (`path:LINE`).
    let abs = b.root.join("research-link/dense-passage-retrieval.md");
    for path in [
        abs.to_str().unwrap(),
        "lore/../research-link/dense-passage-retrieval.md",
        "research-link/dense-passage-retrieval.md:3",
    ] {
        for tool in ["links", "similar"] {
            let r = client
                .call_tool(call(tool, json!({"path": path, "json": true})))
                .await
                .unwrap();
            assert_eq!(r.is_error, Some(false), "{tool} {path}: {}", text(&r));
            let j: Value = serde_json::from_str(&text(&r)).expect("json");
            if tool == "links" {
                assert_eq!(j["path"], "research-link/dense-passage-retrieval.md", "{j}");
            }
        }
    }

    let r = client.call_tool(call("status", json!({}))).await.unwrap();
    assert_eq!(r.is_error, Some(false));
    assert!(text(&r).contains("notes:     34 ("), "{}", text(&r));
    let r = client
        .call_tool(call("status", json!({"json": true})))
        .await
        .unwrap();
    let j: Value = serde_json::from_str(&text(&r)).expect("status json");
    assert_eq!(j["notes"], 34, "{j}");
    assert_eq!(j["backend_state"], "not_running", "{j}");

    // similar: a draft's verdict first (keywords only here: no model), a note never its own
    let r = client
        .call_tool(call(
            "similar",
            json!({"text": "# Busy timeout\nSet busy_timeout or writers get database is locked"}),
        ))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert!(
        text(&r).contains("(note: no embedding model"),
        "{}",
        text(&r)
    );
    // Where the notes are, to edit the duplicate it names.
    assert!(
        text(&r).ends_with(&format!("(notes in {})", b.root.display())),
        "{}",
        text(&r)
    );
    let r = client
        .call_tool(call(
            "similar",
            json!({"path": "lore/sqlite-busy-timeout.md", "json": true}),
        ))
        .await
        .unwrap();
    let j: Value = serde_json::from_str(&text(&r)).expect("similar json");
    assert!(j["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["path"] != "lore/sqlite-busy-timeout.md"));
    // The note named as a link names it, as the assistant reads `[[lore/x]]` in a note.
    let r = client
        .call_tool(call(
            "similar",
            json!({"path": "lore/sqlite-busy-timeout", "json": true}),
        ))
        .await
        .unwrap();
    let linked: Value = serde_json::from_str(&text(&r)).expect("similar json");
    assert_eq!(linked["results"], j["results"]);
    // A whole number written as a float (`2.0`, as a Python client sends it) is one.
    let r = client
        .call_tool(call(
            "search",
            json!({"query": "sqlite", "top": 2.0, "json": true}),
        ))
        .await
        .unwrap();
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let two: Value = serde_json::from_str(&text(&r)).expect("search json");
    assert_eq!(two["results"].as_array().unwrap().len(), 2, "{two}");
    // `get` takes a note named as a link names it, as `links` and `similar` do.
    let r = client
        .call_tool(call(
            "get",
            json!({"path": "lore/sqlite-busy-timeout", "count": 1.0}),
        ))
        .await
        .unwrap();
    assert!(
        text(&r).contains("lore/sqlite-busy-timeout.md"),
        "{}",
        text(&r)
    );

    // bad arguments are tool errors the model can read, and the server lives on
    let bad = [
        ("search", json!({"query": "  "}), "empty query"),
        (
            "search",
            json!({"query": "x", "mode": "fuzzy"}),
            "unknown variant",
        ),
        (
            "search",
            json!({"query": "x", "top": 0}),
            "`top`: takes a whole number from 1 to",
        ),
        (
            "search",
            json!({"query": "x", "top": 101}),
            "`top`: takes a whole number from 1 to 100, got 101",
        ),
        // The argument named, and what it takes in words (rmcp said "expected u32").
        (
            "search",
            json!({"query": "x", "top": -3}),
            "error: `top`: takes a whole number from 1 to 100; invalid value: integer `-3`",
        ),
        (
            "search",
            json!({"query": "x", "top": 2.5}),
            "error: `top`: takes a whole number from 1 to 100; invalid value: floating point `2.5`",
        ),
        // Not the bounds of the type it is read into.
        (
            "similar",
            json!({"text": "x", "top": 4_294_967_296u64}),
            "error: `top`: takes a whole number from 1 to 50; invalid value: integer `4294967296`",
        ),
        (
            "get",
            json!({"path": "lore/sqlite-busy-timeout.md", "line": 4_294_967_296u64}),
            "error: `line`: invalid value: integer `4294967296`, expected a whole number up to 4294967295",
        ),
        (
            "get",
            json!({"path": "lore/sqlite-busy-timeout.md", "count": "3"}),
            "error: `count`: invalid type: string \"3\", expected a whole number",
        ),
        ("search", json!({"query": "x", "limit": 3}), "unknown field"),
        (
            "search",
            json!({}),
            "error: bad arguments: missing field `query`",
        ),
        (
            "get",
            json!({"path": "lore/sqlite-busy-timeout.md", "json": "yes"}),
            "error: `json`: invalid type: string \"yes\", expected true or false",
        ),
        ("status", json!({"bogus": 1}), "unknown field"),
        (
            "search",
            json!({"query": "x", "since": "3x"}),
            "error: `since`: ",
        ),
        (
            "search",
            json!({"query": "x", "where": ["nofield"]}),
            "error: `where` \"nofield\": expected FIELD=VALUE",
        ),
        (
            "get",
            json!({"path": "../secret.md"}),
            "outside the brain folder",
        ),
        (
            "get",
            json!({"path": "/etc/passwd"}),
            "outside the brain folder",
        ),
        ("get", json!({"path": "lore/nope.md"}), "no such note"),
        (
            "get",
            json!({"path": "lore/sqlite-busy-timeout.md", "line": 0}),
            "numbered from 1",
        ),
        (
            "get",
            json!({"path": "lore/sqlite-busy-timeout.md", "line": 99}),
            "past the end",
        ),
        ("get", json!({"path": ""}), "path is empty"),
        ("similar", json!({}), "exactly one of"),
        (
            "similar",
            json!({"text": "x", "path": "y"}),
            "exactly one of",
        ),
        ("similar", json!({"text": "   "}), "empty"),
        (
            "similar",
            json!({"path": "/etc/passwd"}),
            "outside the brain folder",
        ),
        (
            "similar",
            json!({"path": "lore/nope.md"}),
            "lore/nope.md: no such file in the brain folder",
        ),
        (
            "similar",
            json!({"path": "lore"}),
            "lore is a folder, not a note",
        ),
        ("similar", json!({"path": "lore/fifo.md"}), "error: lore/fifo.md: not a file"),
        (
            "similar",
            json!({"path": "lore/nope"}),
            "lore/nope: no such file in the brain folder",
        ),
        (
            "similar",
            json!({"text": "x", "top": 0}),
            "`top`: takes a whole number from 1 to",
        ),
    ];
    for (tool, args, expect) in bad {
        let r = client
            .call_tool(call(tool, args.clone()))
            .await
            .unwrap_or_else(|e| panic!("{tool} {args}: {e}"));
        assert_eq!(r.is_error, Some(true), "{tool} {args}: {}", text(&r));
        assert!(text(&r).contains(expect), "{tool} {args}: {}", text(&r));
    }
    let r = client.call_tool(call("status", json!({}))).await.unwrap();
    assert_eq!(r.is_error, Some(false), "still serving after the bad calls");
    // `null` is an argument left out, for every optional one: assistants send it.
    let r = client
        .call_tool(call(
            "search",
            json!({"query": "busy_timeout", "mode": null, "top": null, "type": null,
                   "where": null, "json": null}),
        ))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let r = client
        .call_tool(call(
            "similar",
            json!({"text": "busy timeout", "top": null, "json": null}),
        ))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    // So is an empty filter (`type: ""` filtered every note out).
    let r = client
        .call_tool(call(
            "search",
            json!({"query": "busy_timeout", "type": "", "tag": " ", "since": "", "before": ""}),
        ))
        .await
        .unwrap();
    assert!(
        text(&r).contains("lore/sqlite-busy-timeout.md"),
        "{}",
        text(&r)
    );
    client.cancel().await.unwrap();
}

/// The server's stdout, line by line, on a thread (reads with a timeout).
fn lines_of(child: &mut Child) -> Receiver<String> {
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

fn send(stdin: &mut ChildStdin, msg: Value) {
    writeln!(stdin, "{msg}").unwrap();
    stdin.flush().unwrap();
}

fn answer(rx: &Receiver<String>, id: u64, seen: &mut Vec<Value>) -> Value {
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("an answer within a minute");
        let msg: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
        assert_eq!(msg["jsonrpc"], "2.0", "{msg}");
        seen.push(msg.clone());
        if msg["id"] == json!(id) {
            return msg;
        }
    }
}

#[test]
fn a_client_that_leaves_before_the_handshake_ends_the_session_quietly_exit_0() {
    // A probe, a lone `ping`, a start cancelled: stdin closes before `initialize`. That is
    // the client's end of the session, not a server that failed to start (it said
    // "error: MCP handshake: connection closed" and exited 1).
    let b = Brain::example();
    for input in [
        &b""[..],
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n",
    ] {
        let r = b.run_stdin(&["mcp"], input);
        assert_eq!(r.code(), 0, "{}", r.stderr());
        assert!(!r.stderr().contains("error"), "{}", r.stderr());
    }
}

/// A client that stops reading stdout and keeps stdin open has left: the server ends (it
/// ran on, logging a broken pipe per request, until stdin closed).
#[test]
fn the_server_exits_when_the_client_stops_reading() {
    let b = Brain::example();
    let mut child = b
        .command()
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}),
    );
    let mut init = String::new();
    stdout.read_line(&mut init).unwrap();
    assert!(init.contains("\"serverInfo\""), "{init}");
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    drop(stdout);
    // brain mcp must end within 10 s of its client's leaving: pinged meanwhile, it finds
    // stdout gone at a reply.
    let mut id = 2;
    let status = eventually(Duration::from_secs(10), || {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        // The server may be gone between the check and the write.
        let _ = writeln!(
            stdin,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
        );
        let _ = stdin.flush();
        id += 1;
        None
    });
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "exit {status}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn the_wire_carries_only_json_rpc_and_the_server_exits_when_stdin_closes() {
    let b = Brain::example();
    let mut child = b
        .command()
        .args(["mcp", "--log-level", "debug"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rx = lines_of(&mut child);
    let mut stdin = child.stdin.take().unwrap();
    let mut seen = Vec::new();

    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}),
    );
    let init = answer(&rx, 1, &mut seen);
    assert_eq!(
        init["result"]["protocolVersion"], "2025-06-18",
        "an older client's version is echoed: {init}"
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "brain");
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );

    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "search", "arguments": {"query": "flag cleanup", "top": 2}}}),
    );
    let r = answer(&rx, 2, &mut seen);
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert!(
        r["result"].get("structuredContent").is_none(),
        "text only: Claude Code shows the model structuredContent alone"
    );
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("[1] [lore] lore/flag-cleanup-test-rework.md:"),
        "{r}"
    );

    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "get", "arguments": {"path": "/etc/passwd"}}}),
    );
    let r = answer(&rx, 3, &mut seen);
    assert_eq!(r["result"]["isError"], true, "{r}");

    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "delete_everything", "arguments": {}}}),
    );
    let r = answer(&rx, 4, &mut seen);
    assert!(
        r.get("error").is_some() || r["result"]["isError"] == true,
        "an unknown tool is refused: {r}"
    );

    // What a strict parser refuses but a client meant: a lone surrogate (Node writes one
    // for half an emoji) and a raw control character are answered; a line that is not JSON
    // at all is dropped with a warning on stderr, and the next request is answered.
    let raw = |stdin: &mut ChildStdin, line: &[u8]| {
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    raw(
        &mut stdin,
        br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"search","arguments":{"query":"flag cleanup \ud83d","top":1}}}"#,
    );
    let r = answer(&rx, 5, &mut seen);
    assert_eq!(r["result"]["isError"], false, "{r}");
    raw(
        &mut stdin,
        b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"arguments\":{\"query\":\"flag\x01cleanup\",\"top\":1}}}",
    );
    let r = answer(&rx, 6, &mut seen);
    assert_eq!(r["result"]["isError"], false, "{r}");
    raw(&mut stdin, b"hello world");
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}),
    );
    answer(&rx, 7, &mut seen);

    drop(stdin);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "brain mcp did not exit after stdin closed"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "exit {status}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("is not JSON and was dropped"), "{stderr}");
    // everything that reached stdout was a protocol message (checked as it was read)
    while let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
        let msg: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
        assert_eq!(msg["jsonrpc"], "2.0");
    }
    assert!(seen.len() >= 4);
}

/// With `brain serve` running on the brain, the MCP tools are answered by it: `status`
/// shows the serving backend's pid.
#[tokio::test(flavor = "current_thread")]
async fn the_tools_are_answered_by_a_running_backend() {
    let b = Brain::example();
    // The harness waits on the socket's own `hello`, and names the exit if serve dies.
    let serve = b.serve(&["--no-watch"]);

    let mut cmd = b.command();
    cmd.arg("mcp");
    let transport = TokioChildProcess::new(tokio::process::Command::from(cmd)).unwrap();
    let client = ().serve(transport).await.expect("initialize");
    let status = client.call_tool(call("status", json!({}))).await.unwrap();
    let text_of_status = text(&status);
    let pid = serve.pid();
    assert!(
        text_of_status.contains(&format!("running (pid {pid}")),
        "status should come from the backend:\n{text_of_status}"
    );
    assert!(!text_of_status.contains("note:"), "{text_of_status}");
    client.cancel().await.unwrap();

    // A server whose settings name another model than the backend's says so, where its
    // searches by meaning then run in-process (or fail), against the backend's model line.
    let mut cmd = b.command();
    cmd.env("BRAIN_MODEL", "nomic-embed-text-v1.5").arg("mcp");
    let transport = TokioChildProcess::new(tokio::process::Command::from(cmd)).unwrap();
    let client = ().serve(transport).await.expect("initialize");
    let status = text(&client.call_tool(call("status", json!({}))).await.unwrap());
    assert!(
        status.contains(
            "(note: the backend embeds with all-minilm-l6-v2, and this command's settings name \
             nomic-embed-text-v1.5"
        ),
        "{status}"
    );
    // After a search that found the backend on the other model, this server works
    // in-process for a while: its `status` says why in its answer, not "see the warning
    // above" (a warning only its log holds, which the model never reads).
    client
        .call_tool(call("search", json!({"query": "retry jitter"})))
        .await
        .unwrap();
    let status = text(&client.call_tool(call("status", json!({}))).await.unwrap());
    let status_json = text(
        &client
            .call_tool(call("status", json!({"json": true})))
            .await
            .unwrap(),
    );
    drop(serve);
    let status_json: Value = serde_json::from_str(&status_json).expect("status json");
    assert_eq!(
        status_json["backend_state"], "not_answering",
        "{status_json}"
    );
    assert!(
        status_json["backend_error"]
            .as_str()
            .is_some_and(|e| e.contains("nomic-embed-text-v1.5")),
        "{status_json}"
    );
    assert!(!status.contains("warning above"), "{status}");
    assert!(
        status.contains("backend:   not used (") && status.contains("nomic-embed-text-v1.5"),
        "{status}"
    );
    client.cancel().await.unwrap();
}
