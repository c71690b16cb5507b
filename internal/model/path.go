package model

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CheckFilePath is the one rule for the path of a saved configuration
// file, local or on an SFTP server (ConfigArchiveServer's DstFile, the
// path of a file URI): absolute, naming a file (not "/", no trailing "/",
// no empty, "." or ".." segment), valid UTF-8 without control characters,
// and, on an SFTP server, without '?' or '#' (a URI's query and fragment).
// It returns what is wrong, or "".
func CheckFilePath(p string, remote bool) string {
	switch {
	case !strings.HasPrefix(p, "/"):
		return "not an absolute path"
	case !utf8.ValidString(p) || strings.ContainsFunc(p, unicode.IsControl):
		return "it holds control characters"
	case remote && strings.ContainsAny(p, "?#"):
		return "it holds ? or #"
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "." || seg == ".." {
			return "it holds a " + seg + " segment"
		}
	}
	if strings.HasSuffix(p, "/") || path.Clean(p) != p {
		return "it must name a file (no trailing slash, no empty segments)"
	}
	return ""
}
