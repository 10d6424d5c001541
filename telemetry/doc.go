// Package telemetry records what the proxy sent and did, so Tool Search can be
// compared with direct exposure (SPEC §7).
//
// Three parts:
//
//   - Recorder and Session write the session log: JSON Lines, one record per
//     event (session_start, tools_list, instructions, catalog, search,
//     describe, call, code_run) and a session_end record with the Summary.
//     Argument values and query text are written only when the deployment
//     sets [telemetry] log_arguments = true.
//   - ParseLog and Stats read a session log back and report, per session,
//     how many tool schemas the model saw first, how many searches and
//     describes ran, and which tools were finally called, from which
//     upstream, trusted or not, with what outcome. Sessions without
//     session_end (a crash) are rebuilt from their events; bad lines are
//     skipped and counted.
//   - Metrics exposes Prometheus series on its own registry (Handler for
//     /metrics) and HealthHandler serves /healthz.
//
// The package knows nothing of MCP transports, modes or upstreams: the proxy
// calls into it. It imports only the standard library and client_golang.
package telemetry
