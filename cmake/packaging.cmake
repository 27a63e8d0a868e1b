# How aisched is installed: `cmake --install` puts the binaries in bin/, the
# systemd units, the example configuration and the docs where Debian keeps them;
# `cpack -G DEB` (or `ninja package`) builds a Debian package of the same.
include(GNUInstallDirs)

install(TARGETS aisched aischedctl aisched-inspect aisched-load RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Where bin/aisched looks for it: ../libexec/aisched/ (worker/sandbox find_supervisor).
install(TARGETS aisched-supervisor RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/aisched)
install(FILES deploy/aisched.service deploy/aisched-worker.service
        DESTINATION lib/systemd/system)
# /etc whatever the prefix (Debian's place for a service's configuration);
# `cmake --install` with DESTDIR puts it under that root.
install(FILES deploy/aisched.conf deploy/aisched-worker.conf DESTINATION /etc/aisched)
install(FILES README.md SECURITY.md ARCHITECTURE.md BENCHMARKS.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME aisched)
set(CPACK_PACKAGE_VENDOR "aisched")
set(CPACK_PACKAGE_CONTACT "aisched maintainers <aisched@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Distributed job scheduler with an AI operations agent")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
# Shared-library dependencies read off the binaries (dpkg-shlibdeps).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "tzdata")
# The example configuration is the operator's once installed: kept on upgrade.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA "${CMAKE_SOURCE_DIR}/deploy/debian/conffiles")
include(CPack)
