// Command etcd runs a single-member etcd server for tests, embedded from etcd's own server
// package at the version kube-apiserver's client is built against. Only loopback, no TLS,
// and fsync off (UnsafeNoFsync): the data directory is scratch.
package main

import (
	"flag"
	"log"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	dataDir := flag.String("data-dir", "", "data directory")
	clientURL := flag.String("listen-client-url", "", "client URL, e.g. http://127.0.0.1:2379")
	peerURL := flag.String("listen-peer-url", "", "peer URL, e.g. http://127.0.0.1:2380")
	flag.Parse()
	if *dataDir == "" || *clientURL == "" || *peerURL == "" {
		log.Fatal("usage: etcd -data-dir DIR -listen-client-url URL -listen-peer-url URL")
	}
	cu, err := url.Parse(*clientURL)
	if err != nil {
		log.Fatal(err)
	}
	pu, err := url.Parse(*peerURL)
	if err != nil {
		log.Fatal(err)
	}

	cfg := embed.NewConfig()
	cfg.Name = "testenv"
	cfg.Dir = *dataDir
	cfg.ListenClientUrls = []url.URL{*cu}
	cfg.AdvertiseClientUrls = []url.URL{*cu}
	cfg.ListenPeerUrls = []url.URL{*pu}
	cfg.AdvertisePeerUrls = []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = "warn"

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	<-e.Server.ReadyNotify()
	log.Printf("etcd ready on %s", cu)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case s := <-sig:
		log.Printf("etcd: %v, stopping", s)
	case err := <-e.Err():
		log.Fatal(err)
	}
}
