/* File-format signatures for the error message of a non-JSON input. */
#include <string.h>

#include "magic.h"

struct sig {
	size_t off, len;
	const char *bytes;
	const char *what, *gzwhat;
};

/* Published signatures of each format's first bytes. */
static const struct sig sigs[] = {
	{ 0, 8, "\x89PNG\r\n\x1a\n", "a PNG image", "a gzip-compressed PNG image" },
	{ 0, 3, "\xff\xd8\xff", "a JPEG image", "a gzip-compressed JPEG image" },
	{ 0, 4, "GIF8", "a GIF image", "a gzip-compressed GIF image" },
	{ 0, 4, "PK\x03\x04", "a ZIP archive (a .zip, .whl or .jar; unzip it first)",
	  "a gzip-compressed ZIP archive" },
	{ 0, 4, "\x7f" "ELF", "an ELF executable or library", "a gzip-compressed ELF file" },
	{ 0, 5, "%PDF-", "a PDF document", "a gzip-compressed PDF document" },
	{ 0, 3, "BZh", "bzip2-compressed data (bunzip2 it first)", "bzip2 data inside gzip" },
	{ 0, 6, "\xfd" "7zXZ\x00", "xz-compressed data (unxz it first)", "xz data inside gzip" },
	{ 0, 4, "\x28\xb5\x2f\xfd", "zstd-compressed data (unzstd it first)",
	  "zstd data inside gzip" },
	{ 0, 16, "SQLite format 3\x00", "an SQLite database (an Nsight Systems export?)",
	  "a gzip-compressed SQLite database" },
	{ 257, 5, "ustar", "a tar archive (extract it first)",
	  "a tar archive (a .tar.gz: extract it first)" },
	{ 0, 4, "\x1f\x8b\x08\x00", "doubly gzip-compressed data", "doubly gzip-compressed data" },
	{ 0, 4, "NSYS", "an Nsight Systems report (.nsys-rep), not a torch.profiler trace",
	  "an Nsight Systems report" },
	{ 0, 0, NULL, NULL, NULL }
};

const char *
magic_describe(const unsigned char *p, size_t n, int gz)
{
	size_t i, k;
	int binary = 0;

	for (i = 0; sigs[i].bytes; i++)
		if (n >= sigs[i].off + sigs[i].len &&
		    memcmp(p + sigs[i].off, sigs[i].bytes, sigs[i].len) == 0)
			return gz ? sigs[i].gzwhat : sigs[i].what;
	for (k = 0; k < n && (p[k] == ' ' || p[k] == '\t' || p[k] == '\r' || p[k] == '\n'); k++)
		;
	if (k < n && p[k] == '<')
		return gz ? "gzip-compressed HTML or XML" : "HTML or XML (a web page saved instead "
		    "of the trace?)";
	/*
	 * Control bytes other than white space in the first bytes: not text.
	 * A few bytes (a file cut short) are too few to tell.
	 */
	for (i = 0; n >= 16 && i < n && i < 512; i++)
		if (p[i] < 0x20 && p[i] != '\t' && p[i] != '\r' && p[i] != '\n')
			binary = 1;
	if (binary)
		return gz ? "gzip-compressed binary data" : "binary data";
	return NULL;
}
