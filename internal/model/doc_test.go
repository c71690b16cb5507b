package model

import (
	"os"
	"testing"
)

// TestObjectsDocIsCurrent keeps docs/objects.md equal to what the
// declarations generate. Regenerate with: go run ./cmd/swmgr docs > docs/objects.md
func TestObjectsDocIsCurrent(t *testing.T) {
	want := Builtin().Markdown()
	got, err := os.ReadFile("../../docs/objects.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatal("docs/objects.md is out of date: run `go run ./cmd/swmgr docs > docs/objects.md`")
	}
}
