/* SPDX-License-Identifier: BSD-2-Clause */
/* The Prometheus page's parts (daemon/prom_page.c, prom_health.c): what
 * each configuration shows, the series cap, escaping, and promtool's
 * verdict on a whole page. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "err.h"
#include "hosttotals.h"
#include "httpd.h"
#include "prom_int.h"
#include "promtext.h"
#include "status.h"
#include "testutil.h"

static struct lh_config *
conf(const char *prom)
{
	char path[] = "/tmp/test_prom_page.XXXXXX";
	struct lh_config *c = NULL;
	struct lh_err err;
	int fd = mkstemp(path);
	FILE *f;

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	(void)fprintf(f, "role = \"aggregator\"\nname = \"agg1\"\n%s\n", prom);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_msg(config_load(path, &c, &err) == 0, "%s", err.reason);
	(void)unlink(path);
	return c;
}

static struct hosttotals_row rows[3];
static struct hosttotals_fs fss[2];
static struct prom_counters counters = {rows, 3, fss, 2, 0};

static void
setup(void)
{
	memset(rows, 0, sizeof(rows));
	memset(fss, 0, sizeof(fss));
	rows[0].host = "node01";
	rows[0].fs = "scratch";
	rows[0].total.read_bytes = 1000;
	rows[0].total.write_bytes = 18446744073709551615u;
	rows[0].total.mds_ops = 7;
	rows[0].op_total[MDOPS_OPEN] = 5;
	rows[1].host = "node\"2\\";
	rows[1].fs = "scratch";
	rows[1].total.read_ops = 3;
	rows[2].host = "node01";
	rows[2].fs = "home";
	rows[2].total.oss_ops = 11;
	fss[0].fs = "scratch";
	fss[0].total.read_bytes = 1000;
	fss[0].clients = 2;
	fss[0].op_total[MDOPS_OPEN] = 5;
	fss[1].fs = "home";
	fss[1].total.oss_ops = 11;
	fss[1].clients = 1;
}

static char *
render(const struct lh_config *c, struct prom_page_stats *ps)
{
	struct promtext p;
	size_t n;
	char *s;

	promtext_init(&p);
	ck_assert_int_eq(prom_page_render(&p, c, &counters, ps), 0);
	s = promtext_take(&p, &n);
	ck_assert_ptr_nonnull(s);
	return s;
}

static void
has(const char *page, const char *line)
{
	ck_assert_msg(strstr(page, line) != NULL, "no '%s' in:\n%s", line,
	    page);
}

static void
hasnt(const char *page, const char *line)
{
	ck_assert_msg(strstr(page, line) == NULL, "'%s' in:\n%s", line, page);
}

START_TEST(defaults)
{
	struct lh_config *c = conf("");
	struct prom_page_stats ps;
	char *s = render(c, &ps);

	has(s, "# TYPE lustre_client_read_bytes_total counter\n");
	has(s,
	    "\nlustre_client_read_bytes_total{host=\"node01\","
	    "fs=\"scratch\"} 1000\n");
	has(s,
	    "\nlustre_client_write_bytes_total{host=\"node01\","
	    "fs=\"scratch\"} 18446744073709551615\n");
	has(s,
	    "\nlustre_client_read_ops_total{host=\"node\\\"2\\\\\","
	    "fs=\"scratch\"} 3\n");
	has(s,
	    "\nlustre_client_oss_ops_total{host=\"node01\",fs=\"home\"} "
	    "11\n");
	has(s, "\nlustre_fs_read_bytes_total{fs=\"scratch\"} 1000\n");
	has(s, "\nlustre_fs_clients{fs=\"home\"} 1\n");
	hasnt(s, "metadata_ops");
	ck_assert_uint_eq(ps.rows, 3);
	ck_assert_uint_eq(ps.series, 18);
	ck_assert_uint_eq(ps.dropped, 0);
	free(s);
	config_free(c);
}
END_TEST

START_TEST(chosen)
{
	struct lh_config *c = conf("prometheus {\n families = {\"bytes\"}\n"
	                           " filesystems = {\"scratch\"}\n"
	                           " metadata_ops = {\"open\"}\n}");
	struct prom_page_stats ps;
	char *s = render(c, &ps);

	has(s,
	    "\nlustre_client_read_bytes_total{host=\"node01\","
	    "fs=\"scratch\"} 1000\n");
	hasnt(s, "lustre_client_read_ops_total{");
	hasnt(s, "fs=\"home\"");
	has(s,
	    "\nlustre_client_metadata_ops_total{host=\"node01\","
	    "fs=\"scratch\",op=\"open\"} 5\n");
	has(s,
	    "\nlustre_fs_metadata_ops_total{fs=\"scratch\",op=\"open\"} "
	    "5\n");
	ck_assert_uint_eq(ps.rows, 2);
	ck_assert_uint_eq(ps.series, 6);
	free(s);
	config_free(c);
}
END_TEST

/* Past max_series whole rows are left out, the later ones, and counted. */
START_TEST(capped)
{
	struct lh_config *c = conf("prometheus { max_series = 13 }");
	struct prom_page_stats ps;
	char *s = render(c, &ps);

	ck_assert_uint_eq(ps.rows, 2);
	ck_assert_uint_eq(ps.series, 12);
	ck_assert_uint_eq(ps.dropped, 6);
	hasnt(s, "lustre_client_oss_ops_total{host=\"node01\",fs=\"home\"}");
	has(s, "lustre_fs_oss_ops_total{fs=\"home\"} 11\n");
	free(s);
	config_free(c);
	c = conf("prometheus { families = {} }");
	s = render(c, &ps);
	hasnt(s, "lustre_client_");
	has(s, "lustre_fs_read_bytes_total{fs=\"scratch\"} 1000\n");
	free(s);
	config_free(c);
}
END_TEST

static char *
health(bool ganglia)
{
	static struct status_gatherer g[] = {
	    {.name = "oss1", .connected = true, .expected = true, .batches = 9},
	    {.name = "oss\"2", .missing = true, .sweeps_missed = 2},
	};
	static struct status_route r[] = {{.name = "alpha",
	    .dest = "h:8022",
	    .connected = true,
	    .queued_batches = 1}};
	struct lh_status st = {.role = "aggregator",
	    .version = "1.0",
	    .name = "agg1",
	    .started = 1764320000,
	    .interval_s = 20,
	    .sweep_id = 1764320400,
	    .close_time = 1764320425.5,
	    .close_duration = 0.012,
	    .sweeps_closed = 20,
	    .gatherers = g,
	    .ngatherers = 2,
	    .gatherers_connected = 1,
	    .gatherers_missing = 1,
	    .routes = r,
	    .nroutes = 1};
	struct httpd_stats hs = {.accepted = 4, .requests = 3, .open = 1};
	struct prom_page_stats ps = {.rows = 3, .series = 18, .dropped = 2};
	struct promtext p;
	size_t n;

	st.dns.on = true;
	st.dns.lookups = 17;
	if (ganglia)
		st.ganglia.on = true;
	promtext_init(&p);
	prom_health_render(&p, &st, &hs, &ps);
	return promtext_take(&p, &n);
}

START_TEST(health_part)
{
	char *s = health(false);

	has(s,
	    "\nlharvestd_info{role=\"aggregator\",version=\"1.0\","
	    "name=\"agg1\"} 1\n");
	has(s, "\nlharvestd_last_sweep_close_time_seconds 1764320425.5\n");
	has(s, "\nlharvestd_sweeps_closed_total 20\n");
	has(s, "\nlharvestd_gatherer_connected{gatherer=\"oss1\"} 1\n");
	has(s, "\nlharvestd_gatherer_missing{gatherer=\"oss\\\"2\"} 1\n");
	has(s, "\nlharvestd_dns_lookups_total 17\n");
	/* Off: the family is named, without a sample. */
	has(s, "# TYPE lharvestd_ganglia_values_total counter\n");
	hasnt(s, "\nlharvestd_ganglia_values_total ");
	has(s,
	    "\nlharvestd_route_queued_batches{route=\"alpha\","
	    "dest=\"h:8022\"} 1\n");
	has(s, "\nlharvestd_http_requests_total 3\n");
	has(s, "\nlharvestd_prometheus_series_dropped 2\n");
	free(s);
}
END_TEST

/* A whole page, as /metrics serves it with every part on: written to
 * prom_sample_page.txt for the dashboard's test (tests/CMakeLists.txt),
 * and it passes promtool when it is there (Debian's prometheus package;
 * the integration test needs it anyway). */
START_TEST(promtool)
{
	struct lh_config *c = conf("prometheus { metadata_ops = {\"all\"} }");
	struct prom_page_stats ps;
	char *a = health(true), *b = render(c, &ps);
	FILE *f = fopen("prom_sample_page.txt", "w");

	ck_assert_ptr_nonnull(f);
	(void)fputs(a, f);
	(void)fputs(b, f);
	ck_assert_int_eq(fclose(f), 0);
	if (system("promtool --version >/dev/null 2>&1") == 0)
		ck_assert_int_eq(system("promtool check metrics "
		                        "<prom_sample_page.txt"),
		    0);
	free(a);
	free(b);
	config_free(c);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("prom_page");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, chosen);
	tcase_add_test(tc, capped);
	tcase_add_test(tc, health_part);
	tcase_add_test(tc, promtool);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
