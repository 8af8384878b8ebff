/*
 * kmux_so_file.h - checks a shared object's file before dlopen, and builds paths that never
 * silently shrink. Shared by the core's plugin loader and the plugins that open vendor libraries
 * from folders (CUDA: KMUX_CUDA_LIB_PATH; HIP: KMUX_HIP_RUNTIME, ROCM_PATH).
 *
 * dlopen maps a file's segments as its program headers say: a truncated file (a half-copied
 * install) gives SIGBUS inside dlopen when a segment is touched past the end of the file, and a
 * FIFO blocks open() forever. Checking first turns both into a reason.
 */
#ifndef KMUX_SO_FILE_H
#define KMUX_SO_FILE_H

#include <stddef.h>

/** Result of kmux_so_file_check. */
enum { KMUX_SO_OK = 0, KMUX_SO_ABSENT = 1, KMUX_SO_BAD = 2 };

/** Checks the file at path before it is given to dlopen: a regular file (symbolic links
 *  followed), an ELF object of this machine's class whose program headers and loadable segments
 *  lie within the file. KMUX_SO_OK; KMUX_SO_ABSENT when nothing is there (ENOENT/ENOTDIR);
 *  KMUX_SO_BAD with why = "<path>: <what is wrong>" ("not a regular file (a FIFO)",
 *  "truncated: 1000 bytes, its segments need 14336", "not an ELF shared object", ...).
 *  Opens nothing that could block (the type is checked before open, and open is O_NONBLOCK). */
int kmux_so_file_check(const char *path, char *why, size_t why_size);

/** Writes "<dir>/<file>" (or file alone when dir is NULL or empty) to buf. 0 on success; -1
 *  when it does not fit in size bytes: buf then holds "" and nothing shorter is ever opened. */
int kmux_path_join(char *buf, size_t size, const char *dir, const char *file);

/** Appends to the colon-separated folder list `list` (size bytes, NUL-terminated, may be "") the
 *  folders the ld.so.conf file `conf` names, its "include" files followed (ldconfig's syntax;
 *  ld_conf.c), each folder only when it fits whole. Returns how many were added (0 when conf
 *  cannot be read). Reads only regular files. */
int kmux_ld_conf_folders(const char *conf, char *list, size_t size);

#endif
