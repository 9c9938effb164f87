package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the key material of one test cluster, written as PEM files into the
// state directory. ECDSA P-256 keys throughout: generating them takes
// microseconds, where RSA-2048 takes tens of milliseconds, and both
// kube-apiserver and client-go accept them for serving, client and
// service-account tokens.
type pki struct {
	CAFile, CertFile, KeyFile   string // cluster CA; apiserver serving cert and key
	AdminCertFile, AdminKeyFile string // client cert for "admin" in system:masters
	SAPublicKeyFile, SAKeyFile  string // service-account token verification and signing keys

	CAData, AdminCertData, AdminKeyData []byte
}

// newPKI generates a CA, a serving certificate for 127.0.0.1/::1/localhost, an
// admin client certificate in the system:masters group, and a service-account
// key pair, and writes them into dir.
func newPKI(dir string) (*pki, error) {
	now := time.Now()
	notBefore, notAfter := now.Add(-time.Hour), now.Add(7*24*time.Hour)

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating CA key: %w", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "kubectl-sched-e2e-ca"},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("creating CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("parsing CA certificate: %w", err)
	}

	issue := func(tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		tmpl.SerialNumber = serial()
		tmpl.NotBefore, tmpl.NotAfter = notBefore, notAfter
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return nil, nil, err
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return nil, nil, err
		}
		return pemBlock("CERTIFICATE", der), pemBlock("EC PRIVATE KEY", keyDER), nil
	}

	servingCert, servingKey, err := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 1)},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
	})
	if err != nil {
		return nil, fmt.Errorf("issuing serving certificate: %w", err)
	}
	adminCert, adminKey, err := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, fmt.Errorf("issuing admin client certificate: %w", err)
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating service-account key: %w", err)
	}
	saKeyDER, err := x509.MarshalECPrivateKey(saKey)
	if err != nil {
		return nil, fmt.Errorf("encoding service-account key: %w", err)
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("encoding service-account public key: %w", err)
	}

	p := &pki{
		CAFile:          filepath.Join(dir, "ca.crt"),
		CertFile:        filepath.Join(dir, "apiserver.crt"),
		KeyFile:         filepath.Join(dir, "apiserver.key"),
		AdminCertFile:   filepath.Join(dir, "admin.crt"),
		AdminKeyFile:    filepath.Join(dir, "admin.key"),
		SAPublicKeyFile: filepath.Join(dir, "sa.pub"),
		SAKeyFile:       filepath.Join(dir, "sa.key"),
		CAData:          pemBlock("CERTIFICATE", caDER),
		AdminCertData:   adminCert,
		AdminKeyData:    adminKey,
	}
	files := []struct {
		path string
		data []byte
	}{
		{p.CAFile, p.CAData},
		{p.CertFile, servingCert},
		{p.KeyFile, servingKey},
		{p.AdminCertFile, adminCert},
		{p.AdminKeyFile, adminKey},
		{p.SAPublicKeyFile, pemBlock("PUBLIC KEY", saPubDER)},
		{p.SAKeyFile, pemBlock("EC PRIVATE KEY", saKeyDER)},
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, f.data, 0o600); err != nil {
			return nil, fmt.Errorf("writing %s: %w", f.path, err)
		}
	}
	return p, nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// serial returns a random 128-bit certificate serial number.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}
