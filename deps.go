//go:build tools

package main

import (
	_ "github.com/BurntSushi/toml"
	_ "github.com/dop251/goja"
	_ "github.com/google/jsonschema-go/jsonschema"
	_ "github.com/mark3labs/mcp-go/client"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/common/expfmt"
	_ "github.com/sourcegraph/conc"
)
