// Command kubectl is kubectl, built from k8s.io/kubectl at the pinned version (what
// k8s.io/kubernetes/cmd/kubectl does: the default command, run by component-base's cli).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
)

func main() {
	os.Exit(cli.Run(cmd.NewDefaultKubectlCommand()))
}
