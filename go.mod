module github.com/swmgr/swmgr

go 1.26.8

require (
	github.com/go-crypt/crypt v0.14.15
	github.com/google/uuid v1.6.0
	github.com/spf13/cobra v1.10.2
	go.etcd.io/bbolt v1.5.0
)

require (
	github.com/ergochat/readline v0.1.3 // indirect
	github.com/go-crypt/x v0.4.16 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	golang.org/x/sys v0.45.0 // indirect
	golang.org/x/text v0.9.0 // indirect
)
