package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// The Anthropic Messages API (POST /v1/messages), streamed or not.

type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Type         string `json:"type"`
		Name         string `json:"name"`
		Description  string `json:"description"`
		DeferLoading bool   `json:"defer_loading"`
	} `json:"tools"`
	OutputFormat *struct {
		Schema json.RawMessage `json:"schema"`
	} `json:"output_format"`
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

func (s *Server) anthropic(w http.ResponseWriter, path string, body []byte) {
	var in anthropicRequest
	if err := json.Unmarshal(body, &in); err != nil {
		http.Error(w, "fakemodel: bad messages request: "+err.Error(), http.StatusBadRequest)
		return
	}
	req := &Request{API: "anthropic", Path: path, Body: body, Model: in.Model}
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, Tool{Name: t.Name, Description: t.Description, Deferred: t.DeferLoading})
	}
	if in.OutputFormat != nil {
		req.JSONSchema = in.OutputFormat.Schema
	}
	names := map[string]string{} // tool_use id -> tool name
	for i, m := range in.Messages {
		var blocks []anthropicBlock
		if json.Unmarshal(m.Content, &blocks) != nil {
			var text string
			_ = json.Unmarshal(m.Content, &text)
			blocks = []anthropicBlock{{Type: "text", Text: text}}
		}
		for _, b := range blocks {
			switch {
			case b.Type == "text" && i == 0 && m.Role == "user":
				req.Prompt += b.Text
			case b.Type == "tool_use":
				names[b.ID] = b.Name
			case b.Type == "tool_result":
				req.Results = append(req.Results, Result{Tool: names[b.ToolUseID], Text: contentText(b.Content)})
			}
		}
	}
	turn := s.record(req)
	n := s.next()
	var block map[string]any
	stop := "end_turn"
	if turn.Tool != "" {
		stop = "tool_use"
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%04d", n), "name": turn.Tool, "input": json.RawMessage(turn.Args)}
	} else {
		block = map[string]any{"type": "text", "text": turn.Text}
	}
	usage := map[string]any{"input_tokens": 100, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	msg := map[string]any{"id": fmt.Sprintf("msg_%04d", n), "type": "message", "role": "assistant", "model": in.Model,
		"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage}
	if !in.Stream {
		writeJSON(w, msg)
		return
	}
	startSSE(w)
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	sse(w, "message_start", map[string]any{"type": "message_start", "message": start})
	if turn.Tool != "" {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": turn.Tool, "input": map[string]any{}}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(turn.Args)}})
	} else {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": turn.Text}})
	}
	sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 10}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}
