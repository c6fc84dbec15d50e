package modelapi

import (
	"errors"
	"net/http"
)

// responses is the OpenAI Responses API (Codex CLI) wire format. (Not written yet.)
type responses struct{}

func (responses) decode(r *Request) error { return errors.New("responses: not implemented") }

func (responses) write(w http.ResponseWriter, r *Request, reply Reply) {
	http.Error(w, "responses: not implemented", http.StatusNotImplemented)
}
