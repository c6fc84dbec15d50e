package pgdb

import (
	"net/url"
	"regexp"
	"strings"
)

// secretParams are the connection parameters pgx reads that hold a secret.
var secretParams = []string{"password", "sslpassword"}

// kvSecret matches a secret in a key=value connection string: the key, and
// a value quoted (with \' and \\ escapes) or bare.
var kvSecret = regexp.MustCompile(`(?i)\b(password|sslpassword)\s*=\s*('(?:[^'\\]|\\.)*'|\S*)`)

// Redact returns a connection string without its secrets, in every form
// pgx accepts: a URL's user:password@ and its ?password= and
// ?sslpassword= parameters, and a key=value string's password=… (quoted
// or not). Status and logs print it; what cannot be parsed is reduced to
// its scheme.
func Redact(dsn string) string {
	if IsURL(dsn) {
		u, err := url.Parse(dsn)
		if err != nil {
			scheme, _, _ := strings.Cut(dsn, "://")
			return scheme + "://(unparsable URL, not shown)"
		}
		if u.User != nil {
			if _, has := u.User.Password(); has {
				u.User = url.UserPassword(u.User.Username(), "xxxxx")
			}
		}
		q := u.Query()
		changed := false
		for k := range q {
			for _, s := range secretParams {
				if strings.EqualFold(k, s) {
					q.Set(k, "xxxxx")
					changed = true
				}
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	return kvSecret.ReplaceAllString(dsn, "${1}=xxxxx")
}
