package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// The OpenAI Responses API (POST /v1/responses) and Chat Completions API
// (POST /v1/chat/completions), streamed or not.

// openaiTool is a tool of either API: Responses {type, name, description,
// defer_loading} (a "namespace" tool holds more in Tools), Chat
// Completions {type, function: {name, description}}.
type openaiTool struct {
	Type         string       `json:"type"`
	Name         string       `json:"name"`
	Description  string       `json:"description"`
	DeferLoading bool         `json:"defer_loading"`
	Tools        []openaiTool `json:"tools"`
	Function     *struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"function"`
}

func openaiTools(ts []openaiTool, ns string, out []Tool) []Tool {
	for _, t := range ts {
		switch {
		case t.Function != nil:
			out = append(out, Tool{Name: t.Function.Name, Description: t.Function.Description})
		case t.Type == "namespace":
			out = openaiTools(t.Tools, t.Name, out)
		case t.Name != "":
			out = append(out, Tool{Name: t.Name, Description: t.Description, Deferred: t.DeferLoading, Namespace: ns})
		}
	}
	return out
}

type responsesRequest struct {
	Model  string          `json:"model"`
	Stream bool            `json:"stream"`
	Input  json.RawMessage `json:"input"`
	Tools  []openaiTool    `json:"tools"`
	Text   *struct {
		Format *struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"text"`
}

type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	Arguments string          `json:"arguments"`
}

func (s *Server) responses(w http.ResponseWriter, path string, body []byte) {
	var in responsesRequest
	if err := json.Unmarshal(body, &in); err != nil {
		http.Error(w, "fakemodel: bad responses request: "+err.Error(), http.StatusBadRequest)
		return
	}
	req := &Request{API: "openai-responses", Path: path, Body: body, Model: in.Model, Tools: openaiTools(in.Tools, "", nil)}
	if in.Text != nil && in.Text.Format != nil && in.Text.Format.Type == "json_schema" {
		req.JSONSchema = in.Text.Format.Schema
	}
	var items []responsesItem
	if json.Unmarshal(in.Input, &items) != nil {
		var text string
		_ = json.Unmarshal(in.Input, &text)
		items = []responsesItem{{Type: "message", Role: "user", Content: in.Input}}
	}
	names := map[string]string{}
	for _, it := range items {
		switch it.Type {
		case "message", "":
			if it.Role == "user" {
				req.Prompt = contentText(it.Content) // the last user message: the task, after the client's own context messages
			}
		case "function_call":
			names[it.CallID] = it.Name
		case "function_call_output":
			req.Results = append(req.Results, Result{Tool: names[it.CallID], Text: contentText(it.Output)})
		}
	}
	turn := s.record(req)
	n := s.next()
	var item map[string]any
	if turn.Tool != "" {
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%04d", n), "call_id": fmt.Sprintf("call_%04d", n),
			"name": turn.Tool, "arguments": string(turn.Args), "status": "completed"}
		if t := req.Tool(turn.Tool); t != nil && t.Namespace != "" {
			item["namespace"] = t.Namespace
		}
	} else {
		item = map[string]any{"type": "message", "id": fmt.Sprintf("msg_%04d", n), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": turn.Text, "annotations": []any{}}}}
	}
	usage := map[string]any{"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 110}
	resp := map[string]any{"id": fmt.Sprintf("resp_%04d", n), "object": "response", "status": "completed", "model": in.Model,
		"output": []any{item}, "usage": usage}
	if !in.Stream {
		writeJSON(w, resp)
		return
	}
	startSSE(w)
	created := map[string]any{"id": resp["id"], "object": "response", "status": "in_progress", "model": in.Model, "output": []any{}}
	sse(w, "response.created", map[string]any{"type": "response.created", "response": created})
	sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	if turn.Tool == "" {
		sse(w, "response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "content_index": 0, "delta": turn.Text})
	}
	sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": resp})
}

type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []openaiTool `json:"tools"`
}

func (s *Server) chat(w http.ResponseWriter, path string, body []byte) {
	var in chatRequest
	if err := json.Unmarshal(body, &in); err != nil {
		http.Error(w, "fakemodel: bad chat request: "+err.Error(), http.StatusBadRequest)
		return
	}
	req := &Request{API: "openai-chat", Path: path, Body: body, Model: in.Model, Tools: openaiTools(in.Tools, "", nil)}
	names := map[string]string{}
	for _, m := range in.Messages {
		switch m.Role {
		case "user":
			if req.Prompt == "" {
				req.Prompt = contentText(m.Content)
			}
		case "assistant":
			for _, tc := range m.ToolCalls {
				names[tc.ID] = tc.Function.Name
			}
		case "tool":
			req.Results = append(req.Results, Result{Tool: names[m.ToolCallID], Text: contentText(m.Content)})
		}
	}
	turn := s.record(req)
	n := s.next()
	msg := map[string]any{"role": "assistant", "content": turn.Text}
	finish := "stop"
	if turn.Tool != "" {
		finish = "tool_calls"
		msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"index": 0, "id": fmt.Sprintf("call_%04d", n), "type": "function",
			"function": map[string]any{"name": turn.Tool, "arguments": string(turn.Args)}}}}
	}
	id := fmt.Sprintf("chatcmpl_%04d", n)
	usage := map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
	if !in.Stream {
		writeJSON(w, map[string]any{"id": id, "object": "chat.completion", "model": in.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	startSSE(w)
	sse(w, "", map[string]any{"id": id, "object": "chat.completion.chunk", "model": in.Model,
		"choices": []any{map[string]any{"index": 0, "delta": msg, "finish_reason": nil}}})
	sse(w, "", map[string]any{"id": id, "object": "chat.completion.chunk", "model": in.Model,
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}, "usage": usage})
	_, _ = w.Write([]byte("data: [DONE]\n\n"))
}
