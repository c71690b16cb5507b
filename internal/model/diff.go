package model

import "encoding/json"

// Diff is one object's change, as clients see it. Before and After hold
// every field, each set secret as "******".
type Diff struct {
	Kind     string
	Key      string // "IntfRef=fpPort1"
	ObjectId string
	Op       string          // create, update, delete
	Before   json.RawMessage `json:",omitempty"`
	After    json.RawMessage `json:",omitempty"`
}
