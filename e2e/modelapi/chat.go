package modelapi

import (
	"errors"
	"net/http"
)

// chat is the OpenAI chat completions (OpenCode) wire format. (Not written yet.)
type chat struct{}

func (chat) decode(r *Request) error { return errors.New("chat: not implemented") }

func (chat) write(w http.ResponseWriter, r *Request, reply Reply) {
	http.Error(w, "chat: not implemented", http.StatusNotImplemented)
}
