// Command etcd is the etcd server, built from go.etcd.io/etcd/server/v3 at the version that the
// pinned Kubernetes release uses (the same thing etcd's own main package does).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
