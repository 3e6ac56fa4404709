# Answers with a maintenance page while the back office is switched to maintenance.
when HTTP_REQUEST {
    if { [class match [IP::client_addr] equals maintenance_admins] } {
        return
    }
    HTTP::respond 503 content "<html><body>Back office maintenance in progress.</body></html>" "Retry-After" "600"
}
