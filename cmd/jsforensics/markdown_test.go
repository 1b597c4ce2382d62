package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// strongMeant are the texts the Markdown report puts in bold itself.
var strongMeant = regexp.MustCompile(`^(critical|warning|info|Could not judge|\d+ critical)$`)

// TestMarkdownHasNoStrayEmphasis renders every fixture's Markdown report
// with a CommonMark renderer (goldmark, GitHub's tables and strikethrough):
// no emphasis, link, image, strikethrough or raw HTML comes from the
// report's text (`_meta_`, `$G > ORDERS`, `*`), only the bold the report
// means.
func TestMarkdownHasNoStrayEmphasis(t *testing.T) {
	md := goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough))
	tag := regexp.MustCompile(`<(em|del|a|img)[ >]|<strong>([^<]*)</strong>`)
	for _, dir := range fixtureDirs(t) {
		t.Run(strings.TrimPrefix(dir, bundles+"/"), func(t *testing.T) {
			src := runCLI(t, "analyze", dir, "--format", "markdown")
			var html bytes.Buffer
			if err := md.Convert(src, &html); err != nil {
				t.Fatal(err)
			}
			for _, m := range tag.FindAllStringSubmatch(html.String(), -1) {
				if m[1] == "" && strongMeant.MatchString(m[2]) {
					continue
				}
				t.Errorf("stray markup %q", m[0])
			}
			if strings.Contains(html.String(), "<!--") || regexp.MustCompile(`<(div|span|script|p [a-z])`).MatchString(html.String()) {
				t.Error("raw HTML from the report's text")
			}
			// The identifiers come through as written.
			if bytes.Contains(src, []byte("_meta")) && !strings.Contains(html.String(), "_meta_") {
				t.Error(`"_meta_" lost in the rendering`)
			}
		})
	}
}
