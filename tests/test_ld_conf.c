/*
 * test_ld_conf.c - kmux_ld_conf_folders (dispatch/common/ld_conf.c): the folders an ld.so.conf
 * names, as ldconfig reads it (comments, "include" globs relative to the including file, "hwcap"
 * lines skipped), without blocking on a FIFO, without looping on a file that includes itself,
 * and never a folder cut to fit.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kmux_so_file.h"

static char root[] = "/tmp/kmux-ld-conf-XXXXXX";

static void write_file(const char *rel, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

static void setup(void) {
    cr_assert_not_null(mkdtemp(root));
    char d[512];
    snprintf(d, sizeof d, "%s/conf.d", root);
    cr_assert_eq(mkdir(d, 0700), 0);
}

static void teardown(void) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) cr_log_warn("could not remove %s", root);
}

/* The test's ld.so.conf (written by write_file("ld.so.conf", ...)). */
static const char *conf_path(void) {
    static char path[512];
    snprintf(path, sizeof path, "%s/ld.so.conf", root);
    return path;
}

TestSuite(ld_conf, .init = setup, .fini = teardown, .timeout = 30);

Test(ld_conf, folders_comments_includes_in_order) {
    write_file("ld.so.conf", "# a comment\n"
                             "/usr/local/lib\n"
                             "\n"
                             "   /opt/first/lib   # trailing comment\n"
                             "include conf.d/*.conf\n"
                             "hwcap 0 nosegneg\n"
                             "relative/ignored\n"
                             "/opt/last/lib\n");
    write_file("conf.d/a-cuda.conf", "/usr/local/cuda/lib64\n");
    write_file("conf.d/b-rocm.conf", "/opt/rocm/lib\r\n/opt/rocm/lib64\n");
    write_file("conf.d/c.txt", "/not/a/conf\n"); /* the glob does not match it */
    char list[1024] = "/from/before";
    const char *conf = conf_path();
    int n = kmux_ld_conf_folders(conf, list, sizeof list);
    cr_expect_str_eq(list, "/from/before:/usr/local/lib:/opt/first/lib:/usr/local/cuda/lib64:"
                           "/opt/rocm/lib:/opt/rocm/lib64:/opt/last/lib");
    cr_expect_eq(n, 6);
}

Test(ld_conf, absolute_include_and_an_empty_list) {
    char inc[600];
    snprintf(inc, sizeof inc, "include %s/conf.d/x.conf\n", root);
    write_file("ld.so.conf", inc);
    write_file("conf.d/x.conf", "/opt/x/lib\n");
    char list[256] = "";
    const char *conf = conf_path();
    cr_expect_eq(kmux_ld_conf_folders(conf, list, sizeof list), 1);
    cr_expect_str_eq(list, "/opt/x/lib");
}

Test(ld_conf, a_fifo_is_not_read_and_self_inclusion_ends) {
    char fifo[512];
    snprintf(fifo, sizeof fifo, "%s/conf.d/fifo.conf", root);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    write_file("conf.d/self.conf", "/opt/self/lib\ninclude self.conf\n");
    write_file("ld.so.conf", "include conf.d/*.conf\n");
    char list[4096] = "";
    const char *conf = conf_path();
    int n = kmux_ld_conf_folders(conf, list, sizeof list); /* returns: the FIFO was not opened */
    /* self.conf read once per level until the depth limit: the folder each time, nothing else */
    cr_expect_gt(n, 0);
    cr_expect_leq(n, 9, "%d folders: the include depth is not bounded", n);
    cr_expect_eq(strncmp(list, "/opt/self/lib", 13), 0, "%s", list);
}

Test(ld_conf, a_folder_that_does_not_fit_is_left_out_whole) {
    write_file("ld.so.conf", "/a/folder/that/is/long\n/short\n");
    char list[16] = "/x";
    const char *conf = conf_path();
    cr_expect_eq(kmux_ld_conf_folders(conf, list, sizeof list), 1);
    cr_expect_str_eq(list, "/x:/short");
}

Test(ld_conf, missing_file_and_bad_arguments_add_nothing) {
    char list[64] = "/kept";
    cr_expect_eq(kmux_ld_conf_folders("/nonexistent/ld.so.conf", list, sizeof list), 0);
    cr_expect_eq(kmux_ld_conf_folders(NULL, list, sizeof list), 0);
    cr_expect_eq(kmux_ld_conf_folders(root, list, sizeof list), 0); /* a directory */
    cr_expect_eq(kmux_ld_conf_folders("/nonexistent", NULL, 10), 0);
    cr_expect_str_eq(list, "/kept");
}
