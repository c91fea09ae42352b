package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"agentd/internal/errdefs"
)

// Embedder turns texts into vectors, one per text, in order.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// EmbeddingsConfig configures an OpenAI-compatible embeddings endpoint
// (OpenAI, Ollama, vLLM, llama.cpp, LM Studio …).
type EmbeddingsConfig struct {
	// BaseURL is the API root, e.g. "http://127.0.0.1:11434/v1";
	// "/embeddings" is appended.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none.
	APIKey string
	// Model names the embedding model.
	Model string
	// Dimensions, when positive, asks for vectors of that length (models
	// that can shorten theirs).
	Dimensions int
	// Timeout bounds one request (default 30s).
	Timeout time.Duration
	// HTTPClient sends the requests (default: one on
	// http.DefaultTransport).
	HTTPClient *http.Client
}

// Embeddings is a client of POST {BaseURL}/embeddings.
type Embeddings struct {
	cfg EmbeddingsConfig
}

// NewEmbeddings returns a client of the endpoint cfg names.
func NewEmbeddings(cfg EmbeddingsConfig) *Embeddings {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &Embeddings{cfg: cfg}
}

type embeddingsRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type embeddingsResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// Embed returns the unit-length embedding of each text. A failure of the
// endpoint is NotAvailable; its cause (the address, the answer) is for the
// log, not for clients.
func (e *Embeddings) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingsRequest{Model: e.cfg.Model, Input: texts, Dimensions: e.cfg.Dimensions})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.BaseURL+"/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, errdefs.NotAvailablef("embeddings: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.cfg.APIKey)
	}
	resp, err := e.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, errdefs.NotAvailablef("embeddings: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, errdefs.NotAvailablef("embeddings: read the answer: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, errdefs.NotAvailablef("embeddings: status %d: %.200s", resp.StatusCode, raw)
	}
	return decodeEmbeddings(raw, len(texts))
}

// decodeEmbeddings reads n vectors of one length from an answer, by index,
// normalised to unit length.
func decodeEmbeddings(raw []byte, n int) ([][]float32, error) {
	var r embeddingsResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, errdefs.NotAvailablef("embeddings: the answer is not an embeddings list: %v", err)
	}
	if len(r.Data) != n {
		return nil, errdefs.NotAvailablef("embeddings: %d vectors for %d texts", len(r.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, errdefs.NotAvailablef("embeddings: bad or repeated index %d", d.Index)
		}
		v, err := normalise(d.Embedding)
		if err != nil {
			return nil, err
		}
		out[d.Index] = v
	}
	if len(out) > 0 {
		for _, v := range out[1:] {
			if len(v) != len(out[0]) {
				return nil, errdefs.NotAvailablef("embeddings: vectors of lengths %d and %d", len(out[0]), len(v))
			}
		}
	}
	return out, nil
}

// normalise scales v to unit length, so that a dot product is the cosine
// similarity.
func normalise(v []float32) ([]float32, error) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return nil, errdefs.NotAvailable(fmt.Errorf("embeddings: a vector of length %d has no direction", len(v)))
	}
	n := math.Sqrt(sum)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out, nil
}
