// The compiled addon (build/Release/luajit_vm.node); require fails where it was not built.
module.exports = require('./build/Release/luajit_vm.node');
