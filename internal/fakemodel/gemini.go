package fakemodel

import (
	"encoding/json"
	"net/http"
	"strings"
)

// The Gemini API (POST /v1beta/models/M:generateContent and
// :streamGenerateContent?alt=sse).

type geminiPart struct {
	Text         string `json:"text"`
	FunctionCall *struct {
		Name string `json:"name"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

type geminiRequest struct {
	Contents []struct {
		Role  string       `json:"role"`
		Parts []geminiPart `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig *struct {
		ResponseMimeType   string          `json:"responseMimeType"`
		ResponseSchema     json.RawMessage `json:"responseSchema"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
	} `json:"generationConfig"`
}

func (s *Server) gemini(w http.ResponseWriter, r *http.Request, path string, body []byte) {
	var in geminiRequest
	if err := json.Unmarshal(body, &in); err != nil {
		http.Error(w, "fakemodel: bad generateContent request: "+err.Error(), http.StatusBadRequest)
		return
	}
	model := path[strings.LastIndex(path, "/")+1:]
	model = model[:strings.IndexByte(model+":", ':')]
	req := &Request{API: "gemini", Path: path, Body: body, Model: model}
	for _, t := range in.Tools {
		for _, f := range t.FunctionDeclarations {
			req.Tools = append(req.Tools, Tool{Name: f.Name, Description: f.Description})
		}
	}
	if g := in.GenerationConfig; g != nil && g.ResponseMimeType == "application/json" {
		req.JSONSchema = g.ResponseJSONSchema
		if req.JSONSchema == nil {
			req.JSONSchema = g.ResponseSchema
		}
		if req.JSONSchema == nil {
			req.JSONSchema = json.RawMessage(`{}`)
		}
	}
	for i, c := range in.Contents {
		for _, p := range c.Parts {
			switch {
			case p.FunctionResponse != nil:
				req.Results = append(req.Results, Result{Tool: p.FunctionResponse.Name, Text: geminiResponseText(p.FunctionResponse.Response)})
			case p.Text != "" && i == 0 && c.Role == "user":
				req.Prompt += p.Text
			}
		}
	}
	turn := s.record(req)
	var part map[string]any
	if turn.Tool != "" {
		var args any
		_ = json.Unmarshal(turn.Args, &args)
		part = map[string]any{"functionCall": map[string]any{"name": turn.Tool, "args": args}}
	} else {
		part = map[string]any{"text": turn.Text}
	}
	resp := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
		"modelVersion":  model,
	}
	if !strings.HasSuffix(path, ":streamGenerateContent") {
		writeJSON(w, resp)
		return
	}
	if r.URL.Query().Get("alt") != "sse" { // a JSON array of responses
		writeJSON(w, []any{resp})
		return
	}
	startSSE(w)
	sse(w, "", resp)
}

// geminiResponseText is a functionResponse's response as text: Gemini CLI
// wraps an MCP result as {"output": text} or {"content": [...]}; the text
// when there is one, the JSON otherwise.
func geminiResponseText(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil {
		if o, ok := m["output"]; ok {
			return contentText(o)
		}
		if c, ok := m["content"]; ok {
			return contentText(c)
		}
	}
	return string(raw)
}
