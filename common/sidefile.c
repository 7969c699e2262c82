/* Side files: regular files only, size-limited (sidefile.h). */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "reslimit.h"
#include "sidefile.h"

static const char *
kind_of(mode_t m)
{
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a plain file";
}

FILE *
side_open(const char *path, const char *what, sbuf *why)
{
	struct stat st;
	FILE *fp;
	int fd, fl;

	sb_reset(why);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		sb_printf(why, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0) {
		sb_printf(why, "cannot read '%s': %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		sb_printf(why, "'%s': not a regular file (%s); the %s is read from regular "
		    "files only", path, kind_of(st.st_mode), what);
		close(fd);
		return NULL;
	}
	if ((unsigned long long)st.st_size > limit_get(LIM_SIDE_BYTES)) {
		side_over(path, what, (unsigned long long)st.st_size, why);
		close(fd);
		return NULL;
	}
	/* blocking again: a regular file's reads never wait anyway */
	if ((fl = fcntl(fd, F_GETFL)) != -1)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	if ((fp = fdopen(fd, "r")) == NULL) {
		sb_printf(why, "cannot read '%s': %s", path, strerror(errno));
		close(fd);
	}
	return fp;
}

int
side_over(const char *path, const char *what, unsigned long long nread, sbuf *why)
{
	if (nread <= limit_get(LIM_SIDE_BYTES))
		return 0;
	sb_reset(why);
	sb_printf(why, "'%s': the %s is larger than %s; no %s is that large", path, what,
	    limit_text(LIM_SIDE_BYTES), what);
	return 1;
}

int
side_read(const char *path, const char *what, sbuf *out, sbuf *why)
{
	FILE *fp = side_open(path, what, why);
	char buf[8192];
	size_t n;

	sb_reset(out);
	if (!fp)
		return -1;
	while ((n = fread(buf, 1, sizeof buf, fp)) > 0) {
		sb_add(out, buf, n);
		if (side_over(path, what, out->len, why)) {
			fclose(fp);
			return -1;
		}
	}
	if (ferror(fp)) {
		sb_printf(why, "cannot read '%s': %s", path, strerror(errno));
		fclose(fp);
		return -1;
	}
	fclose(fp);
	return 0;
}
