# SPDX-License-Identifier: BSD-2-Clause
# CPack settings for the .deb, included from the top-level CMakeLists.txt:
#   cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
#   cmake --build build -j && (cd build && cpack -G DEB)
# The package holds whatever `cmake --install` installs (daemon/, systemd/
# and the top level), installed with prefix /usr, so the configurations
# land in /etc/lharvestd however the build tree was configured.

set(LH_PACKAGE_MAINTAINER "lharvestd developers <lharvestd@example.org>"
	CACHE STRING "Maintainer field of the packages")
set(LH_PACKAGE_HOMEPAGE "https://example.org/lharvestd"
	CACHE STRING "Homepage of the packages")

set(CPACK_PACKAGE_NAME lharvestd)
set(CPACK_PACKAGE_VENDOR "lharvestd developers")
set(CPACK_PACKAGE_CONTACT "${LH_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_HOMEPAGE_URL "${LH_PACKAGE_HOMEPAGE}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
	"per-client Lustre I/O statistics for Ganglia")
set(CPACK_PACKAGE_DESCRIPTION
"lharvestd shows, in Ganglia, how much Lustre I/O every compute node does.
On every Lustre server (OSS and MDS) a gatherer reads the per-client export
statistics of the local OSTs and MDTs; on each cluster's management head an
aggregator sums them across servers, turns them into per-node rates and
spoofs them into gmond; relays route a site-wide filesystem's data to the
head of each client's cluster. One binary, lharvestd, runs any of the three
roles; lharvest asks a running aggregator or relay (lharvest top);
lharvest-dump decodes its traffic.")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGE_INSTALL_DIRECTORY lharvestd)
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)

# The DEB generator installs with prefix /usr (its default; setting
# CPACK_PACKAGING_INSTALL_PREFIX here would move the source tarball's
# files under usr/ too).
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libganglia is opened at run time (gmetric/gapi.h), where shlibdeps cannot
# see it: named here, and shlibdeps' list is added to it.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libganglia1")
# gmond receives what the aggregator spoofs; it may run on another host.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS ganglia-monitor)

# Maintainer scripts and conffiles: the configurations are the operator's,
# so an upgrade never overwrites an edited one.
set(lh_conffiles "")
foreach(conf ${LH_CONFS})
	get_filename_component(name ${conf} NAME)
	string(APPEND lh_conffiles "/etc/lharvestd/${name}\n")
endforeach()
file(WRITE ${PROJECT_BINARY_DIR}/packaging/deb/conffiles "${lh_conffiles}")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
	${PROJECT_BINARY_DIR}/packaging/deb/conffiles
	${CMAKE_CURRENT_LIST_DIR}/deb/postinst
	${CMAKE_CURRENT_LIST_DIR}/deb/prerm
	${CMAKE_CURRENT_LIST_DIR}/deb/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

# Source packages are made by packaging/rpm/build-srpm.sh (git's file
# list); keep CPack's own source generator off the build trees anyway.
set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_PACKAGE_FILE_NAME lharvestd-${PROJECT_VERSION})
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build[^/]*/" "/__pycache__/"
	"/tests/fuzz/corpus-[^/]*/")

include(CPack)
