package stdraces

// Races in std functions that the hand-written table does not list: their
// effects come from package modref's summaries (instrument/modref_table.go),
// or from the table's entries for math/rand, fmt's Scan family and io.Copy.

import (
	"bytes"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"text/template"
	"unicode/utf8"
)

func TestRaceHeaderSetSet(t *testing.T) {
	h := http.Header{}
	c := make(chan bool)
	go func() {
		h.Set("A", "1") // race: headerset
		c <- true
	}()
	apart()
	h.Set("B", "2") // race: headerset
	<-c
}

func TestRaceValuesAddGet(t *testing.T) {
	v := url.Values{}
	c := make(chan bool)
	go func() {
		v.Add("a", "1") // race: valuesadd
		c <- true
	}()
	apart()
	sink = v.Get("b") // race: valuesadd
	<-c
}

func TestRaceHexEncodeDst(t *testing.T) {
	dst := make([]byte, 10)
	c := make(chan bool)
	go func() {
		hex.Encode(dst, []byte("hello")) // race: hexdst
		c <- true
	}()
	sink = dst[1] // race: hexdst
	<-c
}

func TestRaceEncodeRuneRead(t *testing.T) {
	buf := make([]byte, 4)
	c := make(chan bool)
	go func() {
		utf8.EncodeRune(buf, 'é') // race: encoderune
		c <- true
	}()
	sink = buf[0] // race: encoderune
	<-c
}

func TestRaceCopyIntoBuffer(t *testing.T) {
	var b bytes.Buffer
	c := make(chan bool)
	go func() {
		io.Copy(&b, strings.NewReader("abc")) // race: iocopy
		c <- true
	}()
	sink = b.Len() // race: iocopy
	<-c
}

func TestRaceRandShared(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	c := make(chan bool)
	go func() {
		sink2 = r.Intn(10) // race: rand
		c <- true
	}()
	sink = r.Intn(10) // race: rand
	<-c
}

func TestRaceSscanfTarget(t *testing.T) {
	var n int
	c := make(chan bool)
	go func() {
		fmt.Sscanf("42", "%d", &n) // race: sscanf
		c <- true
	}()
	sink = n // race: sscanf
	<-c
}

func TestRaceJoinElemWrite(t *testing.T) {
	s := []string{"a", "b", "c"}
	c := make(chan bool)
	go func() {
		s[1] = "x" // race: join
		c <- true
	}()
	sink = strings.Join(s, ",") // race: join
	<-c
}

func TestRaceStringsReaderRead(t *testing.T) {
	r := strings.NewReader("hello world")
	c := make(chan bool)
	go func() {
		r.Read(make([]byte, 3)) // race: readerread
		c <- true
	}()
	r.Read(make([]byte, 3)) // race: readerread
	<-c
}

// The Writer's bufio.Writer, a pointer in it, is what both writes touch
// (modref's Deref: "w*:w").
func TestRaceCSVWriterShared(t *testing.T) {
	w := csv.NewWriter(io.Discard)
	c := make(chan bool)
	go func() {
		w.Write([]string{"a"}) // race: csv
		c <- true
	}()
	w.Write([]string{"b"}) // race: csv
	<-c
}

// The map is passed as an interface: the table's IM reads the map it
// holds (rt.RAnyMap).
func TestRaceTemplateMapWrite(t *testing.T) {
	tm := template.Must(template.New("x").Parse("{{.a}}"))
	m := map[string]int{"a": 1}
	c := make(chan bool)
	go func() {
		m["b"] = 2 // race: template
		c <- true
	}()
	apart()
	tm.Execute(io.Discard, m) // race: template
	<-c
}

// json's type cache synchronizes, so modref gives Decode no summary: the
// hand table's entry says Decode writes the Decoder. The goroutine's Decode
// finishes first (apart: a sleep, no edge): two really overlapping Decodes
// panic ("JSON decoder out of sync"), as CI's run at ab14dbe did.
func TestRaceJSONDecoderShared(t *testing.T) {
	d := json.NewDecoder(strings.NewReader(`1 2 3 4`))
	c := make(chan bool)
	go func() {
		var x int
		d.Decode(&x) // race: decoder
		c <- true
	}()
	apart()
	var y int
	d.Decode(&y) // race: decoder
	<-c
}

var replacer = strings.NewReplacer("a", "b")

// sink2 is the goroutines' sink, where the test's own goroutine writes sink.
var sink2 any

// A Replacer builds itself once (a sync.Once): modref gives it no effect.
func TestNoRaceReplacerShared(t *testing.T) {
	c := make(chan bool)
	go func() {
		sink2 = replacer.Replace("aaa")
		c <- true
	}()
	sink = replacer.Replace("bab")
	<-c
}

func TestNoRaceBytesReaderReadAt(t *testing.T) {
	r := bytes.NewReader([]byte("hello world"))
	c := make(chan bool)
	go func() {
		r.ReadAt(make([]byte, 3), 2)
		c <- true
	}()
	r.ReadAt(make([]byte, 3), 5)
	sink = r.Len()
	<-c
}

func TestNoRaceURLReadShared(t *testing.T) {
	u, _ := url.Parse("http://x.org/a?b=c")
	c := make(chan bool)
	go func() {
		sink2 = u.String()
		c <- true
	}()
	sink = u.Query()
	<-c
}

func TestNoRaceHexDisjoint(t *testing.T) {
	buf := make([]byte, 20)
	c := make(chan bool)
	go func() {
		hex.Encode(buf[0:10], []byte("abcde"))
		c <- true
	}()
	hex.Encode(buf[10:20], []byte("fghij"))
	<-c
}

func TestNoRaceRegexpShared(t *testing.T) {
	re := regexp.MustCompile("a+b")
	c := make(chan bool)
	go func() {
		sink2 = re.MatchString("aab")
		c <- true
	}()
	sink = re.FindString("xaab")
	<-c
}

func TestNoRaceTemplateShared(t *testing.T) {
	tm := template.Must(template.New("x").Parse("{{.}}"))
	c := make(chan bool)
	go func() {
		var b bytes.Buffer
		tm.Execute(&b, 1)
		c <- true
	}()
	var b bytes.Buffer
	tm.Execute(&b, 2)
	<-c
}

// Two executions read one map: no race (IM reads it).
func TestNoRaceTemplateSharedMap(t *testing.T) {
	tm := template.Must(template.New("x").Parse("{{.a}}"))
	m := map[string]int{"a": 1}
	c := make(chan bool)
	go func() {
		var b bytes.Buffer
		tm.Execute(&b, m)
		c <- true
	}()
	var b bytes.Buffer
	tm.Execute(&b, m)
	<-c
}

func TestNoRaceValuesHandoff(t *testing.T) {
	v := url.Values{}
	c := make(chan bool)
	go func() {
		v.Add("a", "1")
		c <- true
	}()
	<-c
	sink = v.Get("a")
}
